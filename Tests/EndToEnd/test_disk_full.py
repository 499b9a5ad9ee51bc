"""A full disk, said plainly: on a 24 MiB filesystem, writes answer 503 in the Firebase envelope
while reads go on, /readyz reports it, the log says it once when it starts and once when it
ends; nothing acknowledged is lost, the chain verifies, and writes resume when space returns.

Needs a tmpfs mount (root); CI runs as root. Elsewhere the test says why it is skipped."""

import os
import subprocess
import tempfile

import pytest
import requests

from conftest import BINARY, Daemon, free_port
from waiting import eventually

KEY = "disk-test-key"


def call(daemon, method, body):
    return requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:{method}?key={KEY}", json=body, timeout=30)


@pytest.fixture
def small_disk():
    mount = tempfile.mkdtemp(prefix="hearth-small-disk-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", mount], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a 24 MiB tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", mount], capture_output=True)
        os.rmdir(mount)


def daemon_on(data, log_dir):
    """A daemon whose log is written off the small disk (so it never fills), at notice level."""
    daemon = Daemon(data, free_port(), env={"HEARTH_LOG_LEVEL": "notice"})
    daemon.log.close()
    daemon.log_path = os.path.join(log_dir, f"serve-{daemon.port}.log")
    daemon.log = open(daemon.log_path, "ab")
    return daemon


def test_a_full_disk_refuses_writes_plainly_and_loses_nothing(small_disk, tmp_path):
    data = os.path.join(small_disk, "data")
    os.makedirs(data)
    daemon = daemon_on(data, tmp_path)
    daemon.start()
    try:
        acknowledged = []
        first = call(daemon, "signUp", {"returnSecureToken": True})
        assert first.status_code == 200
        acknowledged.append(first.json()["localId"])
        # Fill what is left with a file of our own, then sign up until a write finds no room.
        filler = os.path.join(small_disk, "filler")
        with open(filler, "wb") as file:
            try:
                while True:
                    file.write(b"\0" * (1 << 20))
                    file.flush()
            except OSError:
                pass
        refused = None
        for _ in range(20_000):
            reply = call(daemon, "signUp", {"returnSecureToken": True})
            if reply.status_code != 200:
                refused = reply
                break
            acknowledged.append(reply.json()["localId"])
        assert refused is not None, "the disk never filled"
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert error["status"] == "UNAVAILABLE" and "disk is full" in error["message"]
        # Again: still a clear 503, never a 500.
        assert call(daemon, "signUp", {"returnSecureToken": True}).status_code == 503
        # Reads go on.
        looked = call(daemon, "lookup", {"idToken": first.json()["idToken"]})
        assert looked.status_code == 200 and looked.json()["users"][0]["localId"] == acknowledged[0]
        ready = requests.get(daemon.url + "/readyz", timeout=10)
        assert ready.status_code == 503 and ready.json()["checks"]["disk"]["ok"] is False

        os.remove(filler)
        resumed = call(daemon, "signUp", {"returnSecureToken": True})
        assert resumed.status_code == 200, resumed.text
        acknowledged.append(resumed.json()["localId"])
        # Once /readyz's one-second cache has let go of the full disk.
        eventually(lambda: requests.get(daemon.url + "/readyz", timeout=10).status_code == 200, timeout=5, interval=0.1,
                   message="/readyz to answer 200 again once the disk has room")
    finally:
        daemon.stop()
    daemon.log.flush()
    with open(daemon.log_path, errors="replace") as log:
        text = log.read()
    assert text.count("disk is full: writes are refused") == 1, text[-3000:]
    assert text.count("disk space returned") == 1
    assert "INTERNAL_ERROR" not in text
    verify = subprocess.run([BINARY, "audit", "verify", "--data", data], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # Every acknowledged account is in the ledger.
    daemon = daemon_on(data, tmp_path)
    daemon.start()
    try:
        found = requests.post(
            f"{daemon.url}/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:lookup",
            json={"localId": acknowledged}, headers={"Authorization": "Bearer owner"}, timeout=30)
        assert found.status_code == 200
        assert sorted(user["localId"] for user in found.json()["users"]) == sorted(acknowledged)
    finally:
        daemon.stop()
