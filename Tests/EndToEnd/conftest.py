"""Starts the real `hearth serve` binary for the end-to-end tests.

HEARTH_BINARY names the binary (scripts/e2e passes the one it built).
"""

import os
import signal
import socket
import subprocess
import tempfile

import firebase_admin
import pytest
import requests

from waiting import eventually

BINARY = os.environ.get("HEARTH_BINARY", ".build/debug/hearth")
PROJECT = "demo-hearth"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def buffered_request_bytes(port):
    """Bytes of requests the daemon on `port` has received and not yet answered (/metrics, open in
    development, charges its own request too: those bytes are taken off)."""
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    for line in answer.partition(b"\r\n\r\n")[2].decode().splitlines():
        if line.startswith("hearth_request_buffered_bytes "):
            return int(float(line.split()[1])) - len(request)
    raise AssertionError(f"no hearth_request_buffered_bytes in /metrics: {answer[:500]!r}")


class Daemon:
    """One `hearth serve` process over a data directory that outlives restarts."""

    def __init__(self, data_dir, port, env=None, wrapper=()):
        self.data_dir = data_dir
        self.port = port
        self.env = env or {}
        # A command the binary runs under, e.g. ("prlimit", "--nofile=256:256").
        self.wrapper = list(wrapper)
        self.url = f"http://127.0.0.1:{port}"
        self.process = None
        self.log_path = os.path.join(data_dir, "..", f"serve-{port}.log")
        self.log = open(self.log_path, "ab")

    def start(self):
        env = dict(os.environ, HEARTH_SCRYPT_LOG_N="12", HEARTH_LOG_LEVEL="warning")
        env.update(self.env)
        self.process = subprocess.Popen(
            self.wrapper + [BINARY, "serve", "--data", self.data_dir, "--port", str(self.port)],
            stdout=self.log, stderr=self.log, env=env,
        )

        def serving():
            assert self.process.poll() is None, "hearth serve exited during start-up"
            try:
                return requests.get(self.url + "/", timeout=1).ok
            except requests.ConnectionError:
                return False

        eventually(serving, timeout=30, message=f"hearth serve to become ready on {self.url}")

    def stop(self):
        """SIGTERM: drain, flush the writer, exit 0."""
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=30) == 0

    def kill(self):
        self.process.kill()
        self.process.wait(timeout=30)

    def restart(self):
        self.stop()
        self.start()


@pytest.fixture
def daemon():
    with tempfile.TemporaryDirectory(prefix="hearth-e2e-") as root:
        data_dir = os.path.join(root, "data")
        os.makedirs(data_dir)
        instance = Daemon(data_dir, free_port())
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"127.0.0.1:{instance.port}"
        instance.start()
        yield instance
        if instance.process.poll() is None:
            instance.stop()


@pytest.fixture
def admin(daemon):
    """A firebase-admin app for the daemon (FIREBASE_AUTH_EMULATOR_HOST points at it)."""
    app = firebase_admin.initialize_app(options={"projectId": PROJECT}, name=f"admin-{daemon.port}")
    yield app
    firebase_admin.delete_app(app)
