#!/usr/bin/env python3
"""Validate every event the test suite produced against schemas/.

Usage: validate-events.py SCHEMA_DIR DUMP_DIR

Each line of each DUMP_DIR/*.jsonl is one event as `hearth audit replay` prints it. The line
is validated against schemas/events/<type>.v<version>.schema.json (which includes the
envelope). Fails on any invalid line, any event type without a schema, and any schema that
no test exercised.
"""
import json
import pathlib
import sys
from collections import Counter

from jsonschema import Draft202012Validator
from referencing import Registry, Resource


def main() -> int:
    schema_dir, dump_dir = map(pathlib.Path, sys.argv[1:3])
    resources = []
    event_schemas = {}
    for path in sorted(schema_dir.rglob("*.schema.json")):
        document = json.loads(path.read_text())
        Draft202012Validator.check_schema(document)
        resources.append((document["$id"], Resource.from_contents(document)))
        if path.parent.name == "events":
            name, version = path.name[: -len(".schema.json")].rsplit(".v", 1)
            event_schemas[(name, int(version))] = document
    registry = Registry().with_resources(resources)
    validators = {
        key: Draft202012Validator(document, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER)
        for key, document in event_schemas.items()
    }

    counts = Counter()
    failures = []
    files = sorted(dump_dir.glob("*.jsonl"))
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            event = json.loads(line)
            key = (event.get("type"), event.get("version"))
            validator = validators.get(key)
            if validator is None:
                failures.append(f"{path.name}:{number}: no schema for {key[0]} v{key[1]}")
                continue
            for error in validator.iter_errors(event):
                failures.append(f"{path.name}:{number}: {key[0]} v{key[1]}: {error.json_path}: {error.message}")
            counts[key] += 1

    for (name, version), count in sorted(counts.items()):
        print(f"  {name} v{version}: {count} events")
    # Older versions stay in schemas/ for old ledgers; tests need only produce the newest.
    newest = {}
    for name, version in validators:
        newest[name] = max(version, newest.get(name, version))
    unexercised = sorted(set(newest.items()) - set(counts))
    for name, version in unexercised:
        failures.append(f"no test produced a {name} v{version} event")
    total = sum(counts.values())
    print(f"schema validation: {total} events from {len(files)} ledgers, {len(failures)} problems")
    for failure in failures[:50]:
        print("  " + failure)
    print(f"{total} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
