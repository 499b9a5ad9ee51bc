#!/usr/bin/env python3
"""The bridge benchmark of issue 29: what `hearth bridge` costs an SDK in emulator mode, against
plain HTTP straight to Hearth, in the same run.

    swift build -c release --product hearth
    .build/e2e-venv/bin/python Benchmarks/bridge.py [--binary .build/release/hearth] [--duration 10] [--connections 64]

(`scripts/e2e` makes that virtual environment; the benchmark reuses the end-to-end tests' CA,
nginx and bridge helpers.) One daemon (development profile, loopback), the shipped nginx config
in front of it with a certificate from a CA made for the run, and `hearth bridge` in front of
nginx, trusting only that CA. For accounts:lookup and anonymous sign-up, wrk at `--connections`
measures requests/s and p99 three ways: direct (plain HTTP to Hearth, the ceiling), through
nginx alone (https), and through the bridge (plain HTTP to the bridge, https to nginx); then a
paced client (200 requests/s on one keep-alive connection, as an app's SDK sends them) measures
the p99 a request sees unloaded, direct and through the bridge. Each process's CPU time per
request (from /proc) says where the time goes: on the two cores here, the bridge, nginx, Hearth
and wrk share them, so the saturated ratio measures CPU per request more than any waiting.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def cpu_seconds(pids):
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def descendants(pid):
    found = [pid]
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for child in children:
        found += descendants(int(child))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/hearth")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    os.environ["HEARTH_BINARY"] = os.path.realpath(args.binary)
    sys.path[:0] = [str(HERE), str(REPO / "Tests" / "EndToEnd")]
    import api
    from tls_support import Authority, Bridge, Nginx

    root = Path(tempfile.mkdtemp(prefix="hearth-bridge-bench-"))
    daemon = api.Daemon(args.binary, "RS256")
    authority = Authority(root / "ca", "Bench CA")
    nginx = Nginx(root / "nginx", authority.issue(), daemon.port).start(authority.cert)
    bridge = Bridge(root, nginx.url, ca_file=authority.cert).start()
    processes = {
        "hearth": [daemon.process.pid], "nginx": descendants(nginx.child.process.pid),
        "bridge": descendants(bridge.process.pid),
    }
    token = api.post(daemon.api("signUp"), {"returnSecureToken": True})["idToken"]
    workloads = [("accounts:lookup", "lookup", {"idToken": token}), ("anonymous sign-up", "signUp", {"returnSecureToken": True})]
    paths = {"direct": daemon.url, "nginx (https)": nginx.url, "bridge": bridge.url}
    results = []
    try:
        for title, method, body in workloads:
            suffix = f"/identitytoolkit.googleapis.com/v1/accounts:{method}?key={api.KEY}"
            rows = {}
            for name, base in paths.items():
                before = {process: cpu_seconds(pids) for process, pids in processes.items()}
                rate, p99, bad = api.wrk(base + suffix, args.duration, args.connections, body=json.dumps(body))
                spent = {process: cpu_seconds(pids) - before[process] for process, pids in processes.items()}
                served = rate * args.duration
                rows[name] = {
                    "rate": rate, "p99": p99, "errors": bad,
                    "cpu_us": {process: round(seconds / served * 1e6, 1) for process, seconds in spent.items() if seconds > 0},
                }
            paced = {name: api.paced_probe(paths[name] + suffix, json.dumps(body), args.duration) for name in ("direct", "bridge")}
            results.append({"workload": title, "saturated": rows, "paced": paced})
    finally:
        bridge.stop()
        nginx.stop()
        daemon.stop()

    print(f"\nhearth bridge: {args.connections} connections, {args.duration} s each, one wrk thread; "
          "paced: 200 requests/s on one keep-alive connection")
    print(f"{'workload':<20}{'path':<16}{'req/s':>9}{'of direct':>11}{'p99 ms':>9}{'errors':>8}   CPU µs per request")
    for result in results:
        direct = result["saturated"]["direct"]
        for name, row in result["saturated"].items():
            cpu = ", ".join(f"{process} {value}" for process, value in row["cpu_us"].items())
            print(f"{result['workload']:<20}{name:<16}{row['rate']:>9.0f}{row['rate'] / direct['rate']:>10.0%}"
                  f"{row['p99']:>9.2f}{row['errors']:>8}   {cpu}")
        added = result["paced"]["bridge"]["p99"] - result["paced"]["direct"]["p99"]
        print(f"{'':<20}{'paced p99':<16} direct {result['paced']['direct']['p99']:.2f} ms, bridge "
              f"{result['paced']['bridge']['p99']:.2f} ms: {added:+.2f} ms added (target: at most 1 ms)")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
