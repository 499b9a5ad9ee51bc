#!/usr/bin/env python3
"""Two builds of the daemon against each other on the hot paths, alternating in one run so the
machine's noise falls on both alike: password sign-in, accounts:lookup and durable anonymous
sign-up (ES256, 64 connections, wrk), each build started fresh on a temporary data directory,
`--rounds` times. Prints every round's rate and the change of the means, then the daemon's CPU
time per request (user and system, from /proc): steadier than the rate on a shared host, as a
neighbour that takes the cores away lowers the rate but not what each request costs.

    Benchmarks/compare.py --before OLD/hearth --after .build/release/hearth [--rounds 3]

(How issue 28's change was held to "no hot path more than 3% slower"; `Benchmarks/api.py` has
the ceilings and the ratios.)
"""

import argparse
import importlib.util
import json
import os
import statistics

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("api", os.path.join(here, "api.py"))
api = importlib.util.module_from_spec(spec)
spec.loader.exec_module(api)


def cpu_seconds(pid):
    """The process's user and system CPU time so far (/proc/<pid>/stat, in clock ticks)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(binary):
    """Each workload's rate (req/s) and the daemon's CPU microseconds per request."""
    daemon = api.Daemon(binary, "ES256")
    results = {}

    def run(name, url, duration, **options):
        before = cpu_seconds(daemon.process.pid)
        rate, _, _ = api.wrk(url, duration, 64, **options)
        used = cpu_seconds(daemon.process.pid) - before
        results[name] = (rate, 1e6 * used / max(rate * duration, 1))

    try:
        up = api.post(daemon.api("signUp"), {"email": "bench@example.com", "password": "correct-horse-42"})
        signin = json.dumps({"email": "bench@example.com", "password": "correct-horse-42"})
        run("password sign-in", daemon.api("signInWithPassword"), 8, body=signin, timeout=30)
        run("accounts:lookup", daemon.api("lookup"), 5, body=json.dumps({"idToken": up["idToken"]}))
        run("anonymous sign-up", daemon.api("signUp"), 5, body="{}")
        return results
    finally:
        daemon.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs = {"before": [], "after": []}
    # ABBA: the build that goes second in a round runs on a warmer, busier machine (the same
    # build against itself lost 2-4% that way), so every other round swaps the order.
    for round in range(args.rounds):
        for name in ("before", "after") if round % 2 == 0 else ("after", "before"):
            runs[name].append(measure(getattr(args, name)))
    for title, index, unit in (("rate", 0, "req/s"), ("daemon CPU per request", 1, "µs")):
        print(f"{title:<24}{'before (' + unit + ')':>36}{'after (' + unit + ')':>36}{'change':>10}")
        for workload in runs["before"][0]:
            before = [run[workload][index] for run in runs["before"]]
            after = [run[workload][index] for run in runs["after"]]
            change = 100 * (statistics.mean(after) / statistics.mean(before) - 1)
            print(f"{workload:<24}{', '.join(f'{v:,.0f}' for v in before):>36}{', '.join(f'{v:,.0f}' for v in after):>36}"
                  f"{change:>+9.1f}%")

if __name__ == "__main__":
    main()
