#!/usr/bin/env python3
"""The console benchmark: its pages over a million accounts, as ratios to the HTTP floor
measured in the same run on the same machine.

    Benchmarks/console.py [--binary .build/release/hearth] [--accounts 1000000] [--duration 5]

Builds a data directory of `--accounts` accounts (`hearth demo --accounts`, project `bench`,
about six events each), starts the daemon on it (development profile, so the console is open on
loopback), gives one account 1,000 events through the Admin API, then measures with wrk: the
HTTP floor (Hearth's constant `GET /`), and each console page: the users page (uid order, a
page deep in it, the most recent first by creation and by last sign-in), searches (an email's
start, a uid, a provider identity) and the account page with 1,000 events, each by one
administrator (one connection) and by `--connections` at once. The target is a p99 under 50 ms
for each page.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api import free_port, stop, wrk  # noqa: E402

TARGET_MS = 50


def start(binary, data, port):
    env = dict(os.environ, HEARTH_LOG_LEVEL="error", HEARTH_PROJECT="bench")
    process = subprocess.Popen([binary, "serve", "--data", data, "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).read()
            return process
        except OSError:
            time.sleep(0.1)
    raise SystemExit("hearth serve did not start")


def admin(url, method, body):
    request = urllib.request.Request(
        f"{url}/identitytoolkit.googleapis.com/v1/projects/bench/accounts{method}", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer owner"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/hearth")
    parser.add_argument("--accounts", type=int, default=1_000_000)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", type=int, default=4)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="hearth-bench-console-")
    data = os.path.join(root, "data")
    try:
        print(f"machine: {os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; "
              f"{args.connections} connections, {args.duration} s per page\n")
        built = time.monotonic()
        demo = subprocess.run([args.binary, "demo", "--data", data, "--accounts", str(args.accounts)], check=True,
                              stdout=subprocess.PIPE, text=True).stdout
        held = re.search(r"holds ([\d,]+) events, the projections ([\d,]+) accounts", demo)
        print(f"`hearth demo --accounts {args.accounts}` built it in {time.monotonic() - built:.0f} s: "
              f"{held.group(1)} events, {held.group(2)} accounts")
        port = free_port()
        process = start(args.binary, data, port)
        try:
            url = f"http://127.0.0.1:{port}"
            admin(url, "", {"localId": "history-1000", "email": "history@example.com"})
            for index in range(999):
                admin(url, ":update", {"localId": "history-1000", "displayName": f"Name {index}"})
            middle = f"u{args.accounts // 2}"
            pages = [
                ("users page (uid order)", "/console/users"),
                ("users page deep in (after the middle uid)", f"/console/users?after={middle}"),
                ("users page, newest first by creation", "/console/users?sort=creation"),
                ("users page, latest sign-in first", "/console/users?sort=lastSignIn"),
                ("search: the start of an email", f"/console/users?q=user{args.accounts // 3 + 1}"),
                ("search: a uid", f"/console/users?q={middle}"),
                ("search: a provider identity", f"/console/users?q=google.com%3Ag{(args.accounts // 8) * 4}"),
                ("account page with 1,000 events", "/console/users/history-1000"),
            ]
            for name, path in pages:
                with urllib.request.urlopen(url + path, timeout=30) as response:
                    body = response.read()
                # Each page finds what it is measured on: accounts, or the account's events.
                assert response.status == 200 and (b'class="uid"' in body or b"account.profile_updated" in body), name
            worst = 0.0
            for connections in sorted({1, args.connections}):
                floor, floor_p99, _ = wrk(url + "/", args.duration, connections)
                print(f"\n{connections} connection{'s' if connections > 1 else ''}\n"
                      f"{'  HTTP floor (GET /)':<46}{floor:>10,.0f} req/s  p99 {floor_p99:>7.2f} ms")
                for name, path in pages:
                    rate, p99, bad = wrk(url + path, args.duration, connections)
                    assert bad == 0, f"{name}: {bad} answers not 2xx"
                    worst = max(worst, p99)
                    print(f"  {name:<44}{rate:>10,.0f} req/s  p99 {p99:>7.2f} ms  {100 * rate / floor:6.1f}% of the floor"
                          f"  {'ok' if p99 < TARGET_MS else 'OVER'} (< {TARGET_MS} ms)")
            print(f"\nworst p99 {worst:.2f} ms: {'every page under' if worst < TARGET_MS else 'OVER'} the {TARGET_MS} ms target")
        finally:
            stop(process)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
