"""Requests the HTTP parser rejects still get a 4xx in the Firebase envelope from the real
binary, the connection closes, and the daemon serves the next client as before."""

import json
import socket

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
