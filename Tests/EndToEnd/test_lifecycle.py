"""The daemon's life: systemd integration (READY=1 once the server listens, STOPPING=1 on SIGTERM,
exit 0), one daemon per data directory, and the allocator it runs on."""

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import requests

from conftest import BINARY, buffered_request_bytes, free_port
from waiting import eventually


@contextlib.contextmanager
def notified_daemon(root, timeout=30, **env):
    """`hearth serve` with NOTIFY_SOCKET on a datagram socket of ours: yields the process, that
    socket (to read sd_notify messages from) and the port; kills the process if a test left it."""
    path = os.path.join(root, "notify.sock")
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(path)
    listener.settimeout(timeout)
    port = free_port()
    process = subprocess.Popen(
        [BINARY, "serve", "--data", os.path.join(root, "data"), "--port", str(port)],
        env=dict(os.environ, NOTIFY_SOCKET=path, **env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        yield process, listener, port
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        listener.close()


def test_notifies_systemd_ready_and_stopping():
    with tempfile.TemporaryDirectory(prefix="hearth-notify-") as root, notified_daemon(root) as (process, listener, port):
        assert listener.recv(256) == b"READY=1"
        # Ready means ready: the very next request is served.
        assert requests.get(f"http://127.0.0.1:{port}/", timeout=5).ok
        process.send_signal(signal.SIGTERM)
        assert listener.recv(256) == b"STOPPING=1"
        assert process.wait(timeout=30) == 0


def test_stopping_is_told_before_the_server_drains():
    """STOPPING=1 goes out when SIGTERM arrives, not once a slow request in flight has ended."""
    with tempfile.TemporaryDirectory(prefix="hearth-stopping-") as root, notified_daemon(root) as (process, listener, port):
        assert listener.recv(256) == b"READY=1"
        body = b'{"returnSecureToken":true}'
        slow = socket.create_connection(("127.0.0.1", port), timeout=30)
        begun = (b"POST /identitytoolkit.googleapis.com/v1/accounts:signUp?key=k HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:5])
        slow.sendall(begun)
        # In flight: the daemon has what was sent of it.
        eventually(lambda: buffered_request_bytes(port) >= len(begun), timeout=10,
                   message="the daemon to receive the slow request's head and first bytes")
        process.send_signal(signal.SIGTERM)
        assert listener.recv(256) == b"STOPPING=1"
        assert process.poll() is None, "the daemon must still be draining the request in flight"
        slow.sendall(body[5:])
        reply = slow.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
        slow.close()
        assert process.wait(timeout=30) == 0


def test_second_daemon_on_same_data_directory_is_refused():
    with tempfile.TemporaryDirectory(prefix="hearth-lock-") as root:
        data = os.path.join(root, "data")
        port = free_port()
        first = subprocess.Popen([BINARY, "serve", "--data", data, "--port", str(port)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until_serving(port)
            second = subprocess.run([BINARY, "serve", "--data", data, "--port", str(free_port())],
                                    capture_output=True, text=True, timeout=30)
            assert second.returncode != 0
            assert "hearth serve" in second.stderr + second.stdout
        finally:
            first.send_signal(signal.SIGTERM)
            first.wait(timeout=30)


def wait_until_serving(port):
    def serving():
        try:
            return requests.get(f"http://127.0.0.1:{port}/", timeout=1).ok
        except requests.ConnectionError:
            return False

    eventually(serving, timeout=30, interval=0.1, message="hearth serve to start")


def serve_log_line(env):
    """The daemon's start-up line (`hearth serve`, with its settings), then SIGTERM."""
    with tempfile.TemporaryDirectory(prefix="hearth-allocator-") as root:
        process = subprocess.Popen(
            [BINARY, "serve", "--data", os.path.join(root, "data"), "--port", str(free_port())],
            env={**{k: v for k, v in os.environ.items() if k != "MALLOC_CONF"}, "HEARTH_LOG_LEVEL": "info", **env},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        try:
            for line in process.stdout:
                if b"hearth serve" in line:
                    return line.decode()
            raise AssertionError("no start-up line")
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=30)


def test_runs_on_jemalloc_with_its_options():
    # jemalloc serves the allocations (not merely linked), with the options Hearth builds in;
    # an operator's MALLOC_CONF overrides them.
    line = serve_log_line({})
    assert "allocator=jemalloc 5." in line and "dirty_decay_ms 1000" in line
    assert "dirty_decay_ms 5000" in serve_log_line({"MALLOC_CONF": "dirty_decay_ms:5000"})


def test_watchdog_pings_only_while_the_writer_commits():
    """WatchdogSec=: WATCHDOG=1 every half period, each after an empty job committed through the
    writer; none for a process the watchdog is not for (WATCHDOG_PID of another)."""
    with tempfile.TemporaryDirectory(prefix="hearth-watchdog-") as root:
        with notified_daemon(root, timeout=10, WATCHDOG_USEC="1000000") as (process, listener, _):
            # A 1 s watchdog: pinged every half second. Counted from READY=1, until four pings
            # (a loaded host starts slowly; a ping that never comes times the socket out).
            messages = []
            while b"READY=1" not in messages:
                messages.append(listener.recv(256))
            while messages.count(b"WATCHDOG=1") < 4:
                messages.append(listener.recv(256))
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        # Not this process's watchdog: no pings.
        with notified_daemon(root, WATCHDOG_USEC="1000000", WATCHDOG_PID="1") as (process, listener, _):
            assert listener.recv(256) == b"READY=1"
            listener.settimeout(2)
            try:
                extra = listener.recv(256)
            except socket.timeout:
                extra = None
            assert extra is None, extra
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


@pytest.mark.parametrize(
    "name, ceiling", [("hearth.service", 2.0), ("hearth-bridge.service", 2.0), ("hearth-compact.service", 2.5)])
def test_the_units_verify_and_are_tightly_confined(name, ceiling):
    """systemd-analyze verify on each shipped unit (pointed at this binary), and its exposure."""
    unit = os.path.join(os.path.dirname(__file__), "..", "..", "systemd", name)
    with open(unit) as file:
        text = file.read().replace("/usr/bin/hearth", os.path.realpath(BINARY))
    with tempfile.TemporaryDirectory(prefix="hearth-unit-") as root:
        text = text.replace("/etc/hearth/bridge.env", os.path.join(root, "bridge.env"))
        with open(os.path.join(root, "bridge.env"), "w") as file:
            file.write("HEARTH_BRIDGE_LISTEN=127.0.0.1:9100\nHEARTH_BRIDGE_UPSTREAM=https://auth.example.com\n")
        copy = os.path.join(root, name)
        with open(copy, "w") as file:
            file.write(text)
        verified = subprocess.run(["systemd-analyze", "verify", copy], capture_output=True, text=True)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert name not in verified.stdout + verified.stderr, verified.stdout + verified.stderr
        security = subprocess.run(["systemd-analyze", "security", "--offline=true", copy], capture_output=True, text=True)
        exposure = float(security.stdout.split(f"Overall exposure level for {name}:")[1].split()[0])
        assert exposure <= ceiling, security.stdout[-2000:]
