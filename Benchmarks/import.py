#!/usr/bin/env python3
"""The users-import benchmark: `hearth users import` of a
`firebase auth:export` file of 1,000,000 password users (Firebase's modified scrypt hashes,
kept as they are) into the real daemon on a temporary data directory, against the ceiling
measured in the same run: raw LMDB appends of 300-byte events, 1,000 per durable commit
(`hearth bench ledger`'s "LMDB batch of 1000"). Each imported user is one event.

    Benchmarks/import.py [--binary .build/release/hearth] [--users 1000000]

Target: 1 M users in at most 20 s.
"""

import argparse
import base64
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

SCRYPT_FLAGS = ["--hash-algo", "SCRYPT", "--hash-key", base64.b64encode(b"k" * 64).decode(),
                "--salt-separator", "Bw==", "--rounds", "8", "--mem-cost", "14"]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_users(path, count):
    """Firebase's layout; random hashes and salts (never checked: the import keeps them)."""
    # Firebase's scrypt hash is as long as the signer key (64 bytes here); salts are 16.
    random = os.urandom(80 * count)
    with open(path, "w") as out:
        out.write('{"users": [\n')
        for index in range(count):
            chunk = random[80 * index:80 * index + 80]
            if index:
                out.write(",\n")
            out.write(
                f'{{"localId":"bench-{index:07d}","email":"user{index}@bench.example","emailVerified":false,'
                f'"passwordHash":"{base64.b64encode(chunk[:64]).decode()}","salt":"{base64.b64encode(chunk[64:]).decode()}",'
                f'"lastSignedInAt":"1700000500000","createdAt":"1700000000000","disabled":false,"providerUserInfo":[]}}')
        out.write("]}")


def batched_append_ceiling(binary, scratch):
    out = subprocess.run([binary, "bench", "ledger", "--directory", scratch, "--events", "20000",
                          "--commands", "2000", "--commits", "100"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"LMDB batch of 1000\D*([\d,]+)", out)
    return float(match.group(1).replace(",", ""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/hearth")
    parser.add_argument("--users", type=int, default=1_000_000)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="hearth-import-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    try:
        users_file = os.path.join(root, "users.json")
        started = time.monotonic()
        write_users(users_file, args.users)
        print(f"wrote {args.users:,} users ({os.path.getsize(users_file) / 2**20:,.0f} MiB) in {time.monotonic() - started:.1f} s")
        ceiling = batched_append_ceiling(args.binary, os.path.join(root, "ceiling"))

        port = free_port()
        log = open(os.path.join(root, "serve.log"), "wb")
        daemon = subprocess.Popen([args.binary, "serve", "--data", os.path.join(root, "data"), "--port", str(port)],
                                  stdout=log, stderr=log, env=dict(os.environ, HEARTH_LOG_LEVEL="warning"))
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        try:
            started = time.monotonic()
            result = subprocess.run([args.binary, "users", "import", users_file, "--project", "demo-hearth",
                                     "--daemon", f"127.0.0.1:{port}", *SCRYPT_FLAGS], capture_output=True, text=True)
            elapsed = time.monotonic() - started
            assert result.returncode == 0, result.stdout + result.stderr
            assert f"imported {args.users:,} of {args.users:,}" in result.stdout, result.stdout
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        rate = args.users / elapsed
        print(f"ceiling: raw LMDB append, 1,000 events per commit   {ceiling:>12,.0f} events/s")
        print(f"hearth users import (batches of 1,000, via the API) {rate:>12,.0f} users/s  "
              f"{100 * rate / ceiling:5.1f}% of the ceiling")
        print(f"{args.users:,} users in {elapsed:.1f} s (target: 1,000,000 in <= 20 s)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
