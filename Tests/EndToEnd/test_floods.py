"""Floods against the real binary (issue 28): many silent connections from one address while
another address keeps being served, 2,000 connections each sending all but the last byte of a
1 MiB body (resident memory stays bounded and is given back), rounds of idle connections (no
growth), and the timing of a protected password reset for known and unknown addresses.

Client addresses are told apart on loopback: every 127.0.0.0/8 address is this machine's, so
a socket bound to 127.0.0.2 is another client than one bound to 127.0.0.1."""

import resource
import selectors
import socket
import statistics
import struct
import time

import requests

from conftest import Daemon, free_port
from waiting import eventually

SIGN_UP = "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k"
MiB = 1 << 20


def start(tmp_path, env=None):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    daemon = Daemon(str(data_dir), free_port(), env=env)
    daemon.start()
    return daemon


def raise_descriptor_limit(wanted):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = hard if hard != resource.RLIM_INFINITY else wanted
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(room, wanted)), hard))
    return min(room, wanted)


def resident_bytes(daemon):
    with open(f"/proc/{daemon.process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def connect_from(address, port):
    sock = socket.socket()
    # Closed with a reset, not left in TIME_WAIT holding an ephemeral port for later tests.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.bind((address, 0))
    sock.setblocking(False)
    try:
        sock.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    return sock


def metric(daemon, name):
    """A value from the daemon's /metrics (open in development), asked from an address no test
    floods from."""
    sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=10, source_address=("127.0.9.9", 0))
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    for line in answer.partition(b"\r\n\r\n")[2].decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def served_from(address, port, count, timeout=5):
    """`count` sign-ups, each on a new connection from `address`: their statuses and slowest time."""
    statuses, slowest = [], 0.0
    for _ in range(count):
        started = time.monotonic()
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(address, 0))
        body = b"{}"
        sock.sendall(f"POST {SIGN_UP} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except socket.timeout:
            pass
        sock.close()
        statuses.append(int(answer.split(b" ")[1]) if answer.startswith(b"HTTP/1.1 ") else 0)
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.02)  # deliberate: paced like one ordinary client, not a flood of its own
    return statuses, slowest


def test_a_silent_flood_from_one_address_does_not_keep_another_out(tmp_path):
    """5,000 silent connections from 127.0.0.1 against a cap of 1,000 (before issue 28, 20,000 of
    them kept every other client out): the address keeps at most an eighth of what is free, the
    rest are closed at once, and those it keeps are closed once their first head is late;
    127.0.0.2 is served throughout."""
    raise_descriptor_limit(8192)
    daemon = start(tmp_path, env={"HEARTH_MAX_CONNECTIONS": "1000", "HEARTH_REQUEST_HEAD_TIMEOUT_SECONDS": "4"})
    flood = []
    try:
        for _ in range(5000):
            flood.append(connect_from("127.0.0.1", daemon.port))
        # The flood has landed: the daemon closes its surplus at once.
        eventually(lambda: metric(daemon, "hearth_connections_refused_total") > 500, timeout=20, interval=0.1,
                   message="the daemon to refuse 500 of the flood's connections")
        statuses, slowest = served_from("127.0.0.2", daemon.port, 50)
        assert statuses == [200] * 50, statuses
        # The kernel retries the flood's dropped SYNs in waves (1 s, 3 s, 7 s later); each one the
        # daemon accepts and closes beside the served client's requests.
        assert slowest < 5, slowest
        held = metric(daemon, "hearth_connections_open")
        assert held <= 1000 / 9 + 3, held
        assert metric(daemon, "hearth_connections_refused_total") > 500
        # Those it kept are closed once their first head is late (4 s), the last wave's included.
        eventually(lambda: metric(daemon, "hearth_connections_open") <= 2, timeout=20, interval=0.2,
                   message=lambda: f"the held connections to close (still {metric(daemon, 'hearth_connections_open')})")
        assert daemon.process.poll() is None
    finally:
        for sock in flood:
            sock.close()
        daemon.stop()


def test_flooding_addresses_each_take_an_eighth_of_what_is_free(tmp_path):
    """Five addresses flooding at a cap of 200: each holds at most an eighth of the connections
    still free when it asks, so together they hold under half, and a new address gets in."""
    raise_descriptor_limit(8192)
    daemon = start(tmp_path, env={"HEARTH_MAX_CONNECTIONS": "200", "HEARTH_REQUEST_HEAD_TIMEOUT_SECONDS": "30"})
    flood = []
    try:
        for index in range(5):
            for _ in range(100):
                flood.append(connect_from(f"127.0.1.{index + 1}", daemon.port))
        # Every one of the 500 held or refused (the kernel retries SYNs the full backlog dropped a
        # second later); the count of those open includes the metrics request's own connection.
        eventually(lambda: metric(daemon, "hearth_connections_open") + metric(daemon, "hearth_connections_refused_total") > 500,
                   timeout=20, interval=0.1, message="the daemon to hold or refuse each of the 500 connections")
        held = metric(daemon, "hearth_connections_open")
        assert 60 <= held <= 100, held
        statuses, _ = served_from("127.0.2.1", daemon.port, 10)
        assert statuses == [200] * 10, statuses
    finally:
        for sock in flood:
            sock.close()
        daemon.stop()


def pump_bodies(port, addresses, per_address, body_bytes):
    """Opens `per_address` connections from each address, each sending a POST head declaring
    `body_bytes` and then all but the last byte of the body (until the server stops taking
    them); returns the sockets."""
    selector = selectors.DefaultSelector()
    head = (f"POST {SIGN_UP} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {body_bytes}\r\n\r\n").encode()
    chunk = b"x" * (256 * 1024)
    sockets, remaining = [], {}
    for address in addresses:
        for _ in range(per_address):
            sock = connect_from(address, port)
            sockets.append(sock)
            remaining[sock] = [head, body_bytes - 1]
            selector.register(sock, selectors.EVENT_WRITE)
    deadline = time.time() + 60
    while remaining and time.time() < deadline:
        for key, _ in selector.select(timeout=1):
            sock = key.fileobj
            state = remaining[sock]
            try:
                if state[0]:
                    sent = sock.send(state[0])
                    state[0] = state[0][sent:]
                else:
                    sent = sock.send(chunk[:min(len(chunk), state[1])])
                    state[1] -= sent
            except BlockingIOError:
                continue
            except OSError:
                state[0], state[1] = b"", 0  # refused and closed by the server
            if not state[0] and state[1] == 0:
                selector.unregister(sock)
                del remaining[sock]
    for sock in list(remaining):
        selector.unregister(sock)
    return sockets


def test_two_thousand_unfinished_bodies_keep_memory_bounded_and_give_it_back(tmp_path):
    """2,000 connections (ten addresses) each send all but one byte of a 1 MiB body: before
    issue 28 resident memory went from 6 MB to 2.7 GB and stayed. Now the requests past the 64 MiB
    budget are answered 503 (Retry-After), resident memory stays under 256 MiB, and within a
    minute of the flood's end it is back within 48 MiB of where it started."""
    raise_descriptor_limit(8192)
    daemon = start(tmp_path, env={"HEARTH_REQUEST_TIMEOUT_MAX_SECONDS": "60"})
    try:
        # Warm up: a few sign-ups, so the baseline holds what serving takes.
        statuses, _ = served_from("127.0.0.1", daemon.port, 20)
        assert statuses == [200] * 20
        baseline = resident_bytes(daemon)
        addresses = [f"127.0.3.{index + 1}" for index in range(10)]
        peak = 0
        sockets = pump_bodies(daemon.port, addresses, 200, MiB)
        peak = max(peak, resident_bytes(daemon))
        # Held open a while, as the attack did.
        for _ in range(10):
            time.sleep(0.3)  # deliberate: the bodies are held open three seconds, memory sampled meanwhile
            peak = max(peak, resident_bytes(daemon))
        statuses, _ = served_from("127.0.0.9", daemon.port, 5)
        assert all(status in (200, 503) for status in statuses), statuses
        refused = metric(daemon, "hearth_requests_refused_busy_total")
        for sock in sockets:
            sock.close()
        print(f"\nresident: baseline {baseline / MiB:.1f} MiB, peak {peak / MiB:.1f} MiB; {refused:.0f} of 2,000 refused")
        assert peak - baseline < 256 * MiB, f"peak {peak / MiB:.0f} MiB over a baseline of {baseline / MiB:.0f} MiB"
        assert refused > 500, f"only {refused} of 2,000 were refused"

        def back_within_bound():
            resident = resident_bytes(daemon)
            return resident if resident - baseline < 48 * MiB else None

        settled = eventually(
            back_within_bound, timeout=60, interval=0.2,
            message=lambda: f"resident memory back within 48 MiB of its baseline ({baseline / MiB:.0f} MiB): "
                            f"{resident_bytes(daemon) / MiB:.0f} MiB a minute later")
        assert served_from("127.0.0.9", daemon.port, 3)[0] == [200] * 3
        time.sleep(10)  # deliberate: the report below shows where memory stands ten seconds on
        print(f"resident once back under the bound: {settled / MiB:.1f} MiB; ten seconds later: {resident_bytes(daemon) / MiB:.1f} MiB")
    finally:
        daemon.stop()


def test_rounds_of_idle_connections_do_not_grow_memory(tmp_path):
    """Ten rounds of 2,000 idle connections (ten addresses), each closed by the head timeout:
    resident memory after the last round is within 8 MiB of after the first."""
    raise_descriptor_limit(8192)
    daemon = start(tmp_path, env={"HEARTH_REQUEST_HEAD_TIMEOUT_SECONDS": "1"})
    try:
        after = []
        for _ in range(10):
            flood = [connect_from(f"127.0.4.{index + 1}", daemon.port) for index in range(10) for _ in range(200)]
            ended = selectors.DefaultSelector()
            for sock in flood:
                ended.register(sock, selectors.EVENT_READ)
            # The connections the daemon took in (its count includes the metrics request's own)...
            held = eventually(lambda: metric(daemon, "hearth_connections_open") - 1, timeout=30,
                              message="the daemon to take in the round's connections")
            # ...each closed by the head timeout: here, the end of its stream.
            eventually(lambda: len(ended.select(timeout=0)) >= held, timeout=30,
                       message=lambda: f"the head timeout to close the {held:.0f} connections the daemon took in")
            ended.close()
            for sock in flood:
                sock.close()
            # Any it took in since (a SYN the full backlog dropped, retried) goes with the reset.
            eventually(lambda: metric(daemon, "hearth_connections_open") <= 1, timeout=30, interval=0.1,
                       message=lambda: f"the round's connections to close (still {metric(daemon, 'hearth_connections_open')})")
            time.sleep(1.5)  # deliberate: jemalloc's 1 s dirty decay gives back what the round freed first
            after.append(resident_bytes(daemon))
        assert after[-1] - after[0] < 8 * MiB, [round(value / MiB, 1) for value in after]
    finally:
        daemon.stop()


def test_a_protected_reset_takes_as_long_for_a_known_address_as_for_an_unknown_one(tmp_path):
    """Email enumeration protection: the answers were byte-identical, but a known address waited
    for its code's fsync (median 1.46 ms against 0.88 ms). Both now answer before any write."""
    daemon = start(tmp_path)
    try:
        session = requests.Session()
        base = daemon.url + "/identitytoolkit.googleapis.com/v1/accounts:"
        assert session.post(base + "signUp?key=k", json={"email": "known@example.com", "password": "correct-horse-42"}).ok
        patched = session.patch(
            daemon.url + "/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config"
            "?updateMask=emailPrivacyConfig.enableImprovedEmailPrivacy",
            json={"emailPrivacyConfig": {"enableImprovedEmailPrivacy": True}}, headers={"Authorization": "Bearer owner"})
        assert patched.ok, patched.text
        timings = {"known@example.com": [], "nobody@example.com": []}
        for round_ in range(150):
            for email in (timings if round_ % 2 else reversed(list(timings))):
                started = time.perf_counter()
                answer = session.post(base + "sendOobCode?key=k", json={"requestType": "PASSWORD_RESET", "email": email})
                timings[email].append(time.perf_counter() - started)
                assert answer.status_code == 200 and answer.json()["email"] == email
        known = statistics.median(timings["known@example.com"]) * 1000
        unknown = statistics.median(timings["nobody@example.com"]) * 1000
        print(f"\nsendOobCode medians: known {known:.3f} ms, unknown {unknown:.3f} ms")
        assert abs(known - unknown) < 0.25 * min(known, unknown) + 0.1, (known, unknown)
    finally:
        daemon.stop()
