#!/usr/bin/env python3
"""Checks docs/architecture.md's table of which module imports which against Package.swift and the
sources: each production target's Hearth dependencies (Package.swift) must be exactly the Hearth
modules its files import, and exactly what that table says. Prints every difference and
exits 1 on any.   scripts/check-module-map.py   (from the repository's root)"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OURS = re.compile(r"^(Hearth\w+|LMDB|hearth)$")
# Test support and the crash harness are not layers; system library shims are not modules of ours.
SKIP = {"HearthTesting", "hearth-crash-harness"}


def declared():
    package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True, text=True,
                                        check=True).stdout)
    targets = {}
    for target in package["targets"]:
        if target["type"] not in ("regular", "executable") or not OURS.match(target["name"]) or target["name"] in SKIP:
            continue
        names = set()
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            if kind in ("byName", "target") and OURS.match(value[0]):
                names.add(value[0])
        targets[target["name"]] = (names, target.get("path") or f"Sources/{target['name']}")
    return targets


def imported(path):
    names = set()
    for source in (ROOT / path).rglob("*.swift"):
        for line in source.read_text().splitlines():
            match = re.match(r"^(?:@testable\s+|@preconcurrency\s+)?import\s+(\w+)", line)
            if match and OURS.match(match.group(1)):
                names.add(match.group(1))
    return names


# Places that must not reach the HTTP adapter or an HTTP library: the command line (its daemon
# client is HearthTools') and the configuration (the composition maps it to the adapter's types).
NO_HTTP = ("Sources/hearth", "Sources/HearthApp/Configuration")
HTTP_MODULES = re.compile(r"^(HearthHTTP|Hummingbird\w*|HTTPTypes|NIOHTTP\w*|AsyncHTTPClient)$")


def http_imports():
    found = []
    for place in NO_HTTP:
        for source in sorted((ROOT / place).rglob("*.swift")):
            for line in source.read_text().splitlines():
                match = re.match(r"^(?:@testable\s+|@preconcurrency\s+)?import\s+(\w+)", line)
                if match and HTTP_MODULES.match(match.group(1)):
                    found.append(f"{source.relative_to(ROOT)} imports {match.group(1)}")
    return found


def documented():
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("Which module may import which", 1)[1].split("```", 2)[1]
    table = {}
    for line in block.strip().splitlines():
        if "->" in line:
            left, right = line.split("->", 1)
            name = left.split("(")[0].strip()
            table[name] = {part.strip() for part in right.split(",") if part.strip()}
        elif line.endswith(": nothing of Hearth's"):
            for name in line.split(":")[0].split(","):
                table[name.strip()] = set()
    return table


def main():
    problems = []
    targets = declared()
    table = documented()
    for name, (dependencies, path) in sorted(targets.items()):
        actual = imported(path)
        if actual != dependencies:
            problems.append(f"{name}: Package.swift declares {sorted(dependencies)}, its files import {sorted(actual)}")
        if name not in table:
            problems.append(f"{name}: missing from docs/architecture.md's table")
        elif table[name] != dependencies:
            problems.append(f"{name}: docs/architecture.md says {sorted(table[name])}, Package.swift {sorted(dependencies)}")
    for name in sorted(set(table) - set(targets)):
        problems.append(f"{name}: in docs/architecture.md's table, not a production target")
    problems += http_imports()
    for problem in problems:
        print(problem)
    print(f"module map: {len(targets)} targets, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
