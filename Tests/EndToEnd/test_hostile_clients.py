"""Clients that attack the connection layer of the real binary: more connections than it has
descriptors, bodies and headers trickled a byte at a time, garbage pipelined behind valid
requests, and a development daemon asked to listen on the network."""

import json
import os
import resource
import socket
import subprocess
import time

import pytest
import requests

from conftest import BINARY, PROJECT, Daemon, buffered_request_bytes, free_port
from waiting import eventually, throughout

SIGN_UP = "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k"


def start(tmp_path, env=None, wrapper=()):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    daemon = Daemon(str(data_dir), free_port(), env=env, wrapper=wrapper)
    daemon.start()
    return daemon


def post(path, body):
    data = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


def read_responses(sock):
    """Every response on the connection until the server closes it: [(status, headers, body)]."""
    received = b""
    sock.settimeout(20)
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    responses = []
    while received:
        head, _, rest = received.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        responses.append((int(lines[0].split(" ")[1]), headers, rest[:length]))
        received = rest[length:]
    return responses


def account_count(daemon):
    listed = requests.get(
        f"{daemon.url}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:batchGet?maxResults=1000",
        headers={"Authorization": "Bearer owner"}, timeout=10).json()
    return len(listed.get("users", []))


def test_more_connections_than_descriptors_wait_and_the_daemon_lives(tmp_path):
    """256 descriptors, 2,000 connections from 2,000 addresses (one address alone is held to its
    share, test_floods.py): the daemon caps what it accepts (the rest wait in the backlog), never
    runs out of descriptors (libdispatch's monitor traps when it cannot open /proc/<tid>/stat),
    and answers again once the flood lets go."""
    daemon = start(tmp_path, wrapper=("prlimit", "--nofile=256:256"))
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        room = hard if hard != resource.RLIM_INFINITY else 4096
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(room, 4096)), hard))
        flood = []
        for index in range(min(2000, min(room, 4096) - 64)):
            sock = socket.socket()
            sock.bind((f"127.5.{index // 250}.{index % 250 + 1}", 0))
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", daemon.port))
            except BlockingIOError:
                pass
            flood.append(sock)
        # Deliberately four seconds: long enough for libdispatch's once-a-second monitor to run
        # several times, the daemon living throughout.
        throughout(lambda: daemon.process.poll() is None, 4, interval=0.1,
                   message="the daemon lives under the connection flood")
        open_fds = len(os.listdir(f"/proc/{daemon.process.pid}/fd"))
        assert open_fds < 256 - 32, open_fds
        for sock in flood:
            sock.close()

        def answered():
            try:
                return [requests.post(daemon.url + SIGN_UP, json={}, timeout=5)]  # any answer, even one not ok
            except requests.RequestException:
                return None

        [answer] = eventually(answered, timeout=30, interval=0.2, message="an answer once the flood closed")
        assert answer.status_code == 200 and answer.json()["idToken"]
        # Deliberately two seconds more, the daemon living throughout.
        throughout(lambda: daemon.process.poll() is None, 2, interval=0.1, message="the daemon lives after the flood")
        with open(daemon.log_path, encoding="utf-8", errors="replace") as log:
            assert "connection limit reached" in log.read()
    finally:
        if daemon.process.poll() is None:
            daemon.stop()


@pytest.fixture
def strict_daemon(tmp_path):
    daemon = start(tmp_path, env={"HEARTH_REQUEST_TIMEOUT_SECONDS": "2", "HEARTH_REQUEST_TIMEOUT_MAX_SECONDS": "4",
                                  "HEARTH_REQUEST_MIN_BYTES_PER_SECOND": "1024"})
    yield daemon
    daemon.stop()


def trickle(daemon, first, then, interval=0.5):
    """Sends `first`, then `then` a byte every `interval` s until the server answers or closes;
    returns (seconds until then, responses)."""
    sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
    sock.sendall(first)
    started = time.monotonic()
    sock.setblocking(False)
    for byte in then:
        try:
            sock.send(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            break
        try:
            if sock.recv(1, socket.MSG_PEEK):
                break
        except BlockingIOError:
            pass
        except ConnectionResetError:
            break
        time.sleep(interval)  # deliberate: the trickle's pace
        assert time.monotonic() - started < 30, "the trickle was never cut off"
    sock.setblocking(True)
    responses = read_responses(sock)
    sock.close()
    return time.monotonic() - started, responses


def test_a_trickled_body_is_cut_off_with_408(strict_daemon):
    head = (f"POST {SIGN_UP} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 100000\r\n\r\n").encode()
    # White space so far: were the request run on what arrived, it would be `{}`, an anonymous sign-up.
    waited, responses = trickle(strict_daemon, head, b" " * 1000)
    assert 1.5 < waited < 6, waited
    assert [status for status, _, _ in responses] == [408]
    status, headers, body = responses[0]
    assert headers["connection"] == "close"
    assert json.loads(body)["error"]["code"] == 408
    # Nor does the cut-off request run afterwards.
    throughout(lambda: account_count(strict_daemon) == 0, 0.5, message="no account is created")


def test_a_trickled_header_is_cut_off_with_408(strict_daemon):
    waited, responses = trickle(strict_daemon, b"POST " + SIGN_UP.encode(), b" HTTP/1.1\r\nX-Slow: " + b"a" * 1000)
    assert 1.5 < waited < 6, waited
    assert [status for status, _, _ in responses] == [408]


def test_many_trickling_connections_all_close_and_others_are_served(strict_daemon):
    head = (f"POST {SIGN_UP} HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n").encode()
    socks = [socket.create_connection(("127.0.0.1", strict_daemon.port), timeout=10) for _ in range(100)]
    for sock in socks:
        sock.sendall(head)
    started = time.monotonic()
    for _ in range(3):
        for sock in socks:
            try:
                sock.send(b" ")
            except OSError:
                pass
        # Served meanwhile.
        assert requests.post(strict_daemon.url + SIGN_UP, json={}, timeout=5).status_code == 200
        time.sleep(1)  # deliberate: the trickle's pace, a byte a second
    for sock in socks:
        assert [status for status, _, _ in read_responses(sock)] == [408]
        sock.close()
    assert time.monotonic() - started < 10
    assert account_count(strict_daemon) == 3  # the served sign-ups; none of the cut-off ones


def test_a_fair_body_in_pieces_is_served(strict_daemon):
    body = json.dumps({"email": "pieces@example.com", "password": "correct-horse-42"}).encode()
    with socket.create_connection(("127.0.0.1", strict_daemon.port), timeout=10) as sock:
        sock.sendall((f"POST {SIGN_UP} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body[:10])
        time.sleep(1)  # deliberate: the rest of the body a second later, within the allowance
        sock.sendall(body[10:])
        responses = read_responses(sock)
    assert [status for status, _, _ in responses] == [200]


def test_pipelined_requests_before_garbage_are_all_answered(daemon):
    """Three sign-ups then garbage in one write: three answers (each committed sign-up is
    reported), then the 400, then the close."""
    payload = b"".join(post(SIGN_UP, {"email": f"pipe{i}@example.com", "password": "correct-horse-42"}) for i in range(3))
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
        sock.sendall(payload + b"THIS IS NOT HTTP\r\n\r\n")
        responses = read_responses(sock)
    assert [status for status, _, _ in responses] == [200, 200, 200, 400]
    emails = [json.loads(body)["email"] for _, _, body in responses[:3]]
    assert emails == ["pipe0@example.com", "pipe1@example.com", "pipe2@example.com"]
    assert json.loads(responses[3][2])["error"]["message"] == "Malformed HTTP request"
    assert account_count(daemon) == 3


def test_a_request_broken_mid_body_is_not_run(daemon):
    """Two sign-ups, then one whose chunked body turns to garbage after a chunk that is a whole
    JSON object: two answers and the 400; the broken one never runs on what arrived of it."""
    broken = (f"POST {SIGN_UP} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nZZZ\r\n").encode()
    payload = b"".join(post(SIGN_UP, {"email": f"mid{i}@example.com", "password": "correct-horse-42"}) for i in range(2))
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
        sock.sendall(payload + broken)
        responses = read_responses(sock)
    assert [status for status, _, _ in responses] == [200, 200, 400]
    assert account_count(daemon) == 2


def test_a_request_the_client_abandons_mid_body_is_not_run(daemon):
    """A head and a whole JSON object, but fewer bytes than Content-Length, then the client goes
    away: the request fails, it does not run on what arrived."""
    body = b"{}"
    sent = (f"POST {SIGN_UP} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 50\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
        sock.sendall(sent)
        # The daemon has it all before the client goes.
        eventually(lambda: buffered_request_bytes(daemon.port) >= len(sent), timeout=10,
                   message="the daemon to receive the head and the partial body")
        sock.shutdown(socket.SHUT_WR)
        read_responses(sock)
    # Nor does the abandoned request run afterwards.
    throughout(lambda: account_count(daemon) == 0, 0.5, message="no account is created")


def test_connection_close_then_more_does_not_hold_the_connection(daemon):
    """A request with Connection: close, another pipelined behind it (which the parser refuses:
    nothing may follow that request), and a client that never closes: the first is answered,
    then the 400, and the daemon lets go of the socket within seconds."""
    def descriptors():
        return len(os.listdir(f"/proc/{daemon.process.pid}/fd"))

    baseline = descriptors()
    payload = (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
               b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
        sock.sendall(payload)
        assert [status for status, _, _ in read_responses(sock)] == [200, 400]
        # The socket stays open on this side; the daemon's descriptor for it must go.
        eventually(lambda: descriptors() <= baseline, timeout=8, interval=0.2,
                   message="the daemon to let go of the connection")


def test_development_refuses_to_listen_off_loopback(tmp_path):
    refused = subprocess.run(
        [BINARY, "serve", "--data", str(tmp_path / "refused"), "--host", "0.0.0.0", "--port", str(free_port())],
        capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert "loopback" in refused.stderr + refused.stdout
    assert "--insecure-development-on-network" in refused.stderr + refused.stdout

    # A port free on every address, not just on 127.0.0.1 (earlier tests' client sockets hold
    # ephemeral ports on other loopback addresses).
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "insecure.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [BINARY, "serve", "--data", str(tmp_path / "allowed"), "--host", "0.0.0.0", "--port", str(port),
             "--insecure-development-on-network"], stdout=output, stderr=output)
    try:
        def serving():
            try:
                return requests.get(f"http://127.0.0.1:{port}/", timeout=1).ok
            except requests.ConnectionError:
                assert process.poll() is None, log.read_text()[-2000:]
                return False

        eventually(serving, timeout=30, interval=0.1,
                   message=lambda: f"the daemon to serve on the network:\n{log.read_text()[-2000:]}")
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "INSECURE" in log.read_text()
