#!/usr/bin/env python3
"""Two builds of the daemon against each other on the hot paths, alternating in one run so the
machine's noise falls on both alike: password sign-in, accounts:lookup and durable anonymous
sign-up (ES256, 64 connections, wrk), each build started fresh on a temporary data directory,
`--rounds` times. Prints every round's rate and the change of the means.

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


def measure(binary):
    daemon = api.Daemon(binary, "ES256")
    try:
        up = api.post(daemon.api("signUp"), {"email": "bench@example.com", "password": "correct-horse-42"})
        signin = json.dumps({"email": "bench@example.com", "password": "correct-horse-42"})
        password, _, _ = api.wrk(daemon.api("signInWithPassword"), 8, 64, body=signin, timeout=30)
        lookup, _, _ = api.wrk(daemon.api("lookup"), 5, 64, body=json.dumps({"idToken": up["idToken"]}))
        signup, _, _ = api.wrk(daemon.api("signUp"), 5, 64, body="{}")
        return {"password sign-in": password, "accounts:lookup": lookup, "anonymous sign-up": signup}
    finally:
        daemon.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs = {"before": [], "after": []}
    for _ in range(args.rounds):
        for name in ("before", "after"):
            runs[name].append(measure(getattr(args, name)))
    print(f"{'workload':<22}{'before (req/s)':>28}{'after (req/s)':>28}{'change':>10}")
    for workload in runs["before"][0]:
        before = [run[workload] for run in runs["before"]]
        after = [run[workload] for run in runs["after"]]
        change = 100 * (statistics.mean(after) / statistics.mean(before) - 1)
        print(f"{workload:<22}{', '.join(f'{v:,.0f}' for v in before):>28}{', '.join(f'{v:,.0f}' for v in after):>28}{change:>+9.1f}%")


if __name__ == "__main__":
    main()
