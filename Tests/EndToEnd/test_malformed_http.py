"""Requests the HTTP parser rejects still get a 4xx in the Firebase envelope from the real
binary, the connection closes, and the daemon serves the next client as before."""

import json
import socket
import time

import pytest
import requests


def exchange(daemon, raw):
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
        sock.sendall(raw)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), head.decode(), body


@pytest.mark.parametrize(
    "raw, status, message",
    [
        (b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 431, "Request header fields too large"),
        (b"POST /identitytoolkit.googleapis.com/v1/accounts:signUp?key=k HTTP/1.1\r\nHost: x\r\nX-Big: "
         + b"b" * 100_000 + b"\r\nContent-Length: 2\r\n\r\n{}", 431, "Request header fields too large"),
        (b"NOT HTTP AT ALL\r\n\r\n", 400, "Malformed HTTP request"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}", 400, "Malformed HTTP request"),
    ],
)
def test_parser_rejections_get_the_envelope(daemon, raw, status, message):
    code, head, body = exchange(daemon, raw)
    assert code == status
    assert "connection: close" in head.lower()
    envelope = json.loads(body)["error"]
    assert envelope["code"] == status and envelope["message"] == message
    # The daemon is unharmed.
    assert requests.get(daemon.url + "/", timeout=10).json()["authEmulator"]["ready"] is True


@pytest.fixture
def impatient_daemon(tmp_path):
    from conftest import Daemon, free_port

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    instance = Daemon(str(data_dir), free_port(), env={"HEARTH_IDLE_TIMEOUT_SECONDS": "1"})
    instance.start()
    yield instance
    instance.stop()


def test_a_stalled_request_is_closed_after_the_idle_timeout(impatient_daemon):
    """A client that promises a body and stops sending cannot hold the connection for ever."""
    with socket.create_connection(("127.0.0.1", impatient_daemon.port), timeout=10) as sock:
        sock.sendall(b"POST /identitytoolkit.googleapis.com/v1/accounts:signUp?key=k HTTP/1.1\r\n"
                     b"Host: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\"")
        started = time.monotonic()
        try:
            while sock.recv(65536):
                pass
        except ConnectionResetError:
            pass
        waited = time.monotonic() - started
    assert 0.5 < waited < 5, waited
    # Connections that keep talking are unaffected.
    assert requests.get(impatient_daemon.url + "/", timeout=10).json()["authEmulator"]["ready"] is True
