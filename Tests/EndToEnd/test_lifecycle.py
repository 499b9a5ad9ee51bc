"""The daemon's life: systemd integration (READY=1 once the server listens, STOPPING=1 on SIGTERM,
exit 0), one daemon per data directory, and the allocator it runs on."""

import os
import signal
import socket
import subprocess
import tempfile

import time

import requests

from conftest import BINARY, free_port


def test_notifies_systemd_ready_and_stopping():
    with tempfile.TemporaryDirectory(prefix="hearth-notify-") as root:
        path = os.path.join(root, "notify.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(path)
        listener.settimeout(30)
        port = free_port()
        process = subprocess.Popen(
            [BINARY, "serve", "--data", os.path.join(root, "data"), "--port", str(port)],
            env=dict(os.environ, NOTIFY_SOCKET=path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            assert listener.recv(256) == b"READY=1"
            # Ready means ready: the very next request is served.
            assert requests.get(f"http://127.0.0.1:{port}/", timeout=5).ok
            process.send_signal(signal.SIGTERM)
            assert listener.recv(256) == b"STOPPING=1"
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
            listener.close()


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
    for _ in range(300):
        try:
            if requests.get(f"http://127.0.0.1:{port}/", timeout=1).ok:
                return
        except requests.ConnectionError:
            time.sleep(0.1)
    raise AssertionError("hearth serve did not start")


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
    assert "allocator=jemalloc 5." in line and "dirty_decay_ms -1" in line
    assert "dirty_decay_ms 5000" in serve_log_line({"MALLOC_CONF": "dirty_decay_ms:5000"})
