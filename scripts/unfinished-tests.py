#!/usr/bin/env python3
"""Names the Swift tests an interrupted `swift test` run started and never finished.

scripts/test runs the suite under a time limit; when it is reached, this reads the run's
output (swift-testing's `◇ Test X started.` and `✔/✘ Test X … after` lines) so the test
that hung is named rather than the whole run timing out in silence.
"""
import re
import sys

STARTED = re.compile(r"^◇ Test (.+) started\.$")
ENDED = re.compile(r"^[✔✘] Test (.+?)(?: with \d+ test cases?)? (?:passed|failed)")


def unfinished(lines):
    started, ended = [], set()
    for line in lines:
        line = line.rstrip("\n")
        if match := STARTED.match(line):
            if match.group(1) != "run" and not match.group(1).startswith("case "):
                started.append(match.group(1))
        elif match := ENDED.match(line):
            ended.add(match.group(1))
    return [name for name in started if name not in ended]


def main():
    with open(sys.argv[1], encoding="utf-8", errors="replace") as output:
        names = unfinished(output)
    for name in names:
        print(f"  still running: {name}")
    if not names:
        print("  every test that started had finished")


if __name__ == "__main__":
    main()
