"""Hearth behind TLS, end to end: the shipped deploy/nginx/hearth.conf and deploy/caddy/Caddyfile
in front of a production-profile `hearth serve`, with certificates from a local CA; the SDKs'
calls and the headful GitHub sign-in over https; and `hearth bridge`, the loopback sidecar that
lets SDKs in emulator mode (plain http to host:port) reach Hearth over verified TLS."""

import contextlib
import json
import os
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import firebase_admin
import firebase_admin.exceptions
import pytest
import requests
from firebase_admin import auth

from conftest import BINARY, PROJECT, Daemon, free_port
from tls_support import (BUNDLE_ID, SESSION_ID, Authority, Bridge, Caddy, FakeGitHub, Nginx, free_tcp_port,
                         github_headful, handler_query)
from waiting import eventually

API_KEY = "tls-e2e-key"
ADMIN_TOKEN = "tls-e2e-admin-token-7f3a9c2e5b1d4086"
GITHUB_CLIENT_ID = "gh-tls-client"
GITHUB_SECRET = "gh-tls-secret-0123456789abcdef"
ACTION_URL = "https://app.example.com/auth/action"
V1 = "/identitytoolkit.googleapis.com/v1/accounts:"
V3 = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"
TOKEN = "/securetoken.googleapis.com/v1/token"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


class Stack:
    """What the module's tests share: the CAs, the fake GitHub, Hearth, nginx and Caddy."""


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    root = tmp_path_factory.mktemp("tls")
    s = Stack()
    s.root = root
    s.ca = Authority(root / "ca", "Hearth E2E CA")
    s.server = s.ca.issue()
    # An unrelated CA, and a server certificate of its own, for the bridge to refuse.
    s.other_ca = Authority(root / "other-ca", "Unrelated E2E CA")
    s.other_server = s.other_ca.issue()
    with contextlib.ExitStack() as cleanup:
        s.github = FakeGitHub(GITHUB_CLIENT_ID, GITHUB_SECRET).start()
        cleanup.callback(s.github.stop)
        hearth_port = free_port()
        s.nginx = Nginx(root / "nginx", s.server, hearth_port)
        s.caddy = Caddy(root / "caddy", s.server, hearth_port)
        s.public_url = s.nginx.url
        config = root / "hearth.json"
        config.write_text(json.dumps({
            "publicUrl": s.public_url,
            "trustedProxies": ["127.0.0.1"],
            "actionUrl": ACTION_URL,
            "identityProviders": {"github.com": {"webUrl": s.github.base, "apiUrl": s.github.base + "/api/v3"}},
            # The fake GitHub is on loopback, over http: the operator's allowlist admits it.
            "providerAllowedNetworks": ["127.0.0.1/32"],
            "projects": {PROJECT: {"registeredApps": {"iosBundleIds": [BUNDLE_ID]},
                                   "authorizedDomains": ["localhost", "app.example.com"]}},
        }))
        data = root / "data"
        data.mkdir()
        s.daemon = Daemon(str(data), hearth_port, env={
            "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": json.dumps({API_KEY: PROJECT}),
            "HEARTH_ADMIN_TOKENS": ADMIN_TOKEN, "HEARTH_CONFIG": str(config),
            # Request lines (with the client address Hearth settled on, whole), as JSON.
            "HEARTH_LOG_LEVEL": "info", "HEARTH_LOG_FORMAT": "json", "HEARTH_LOG_CLIENT_ADDRESSES": "full",
        })
        cleanup.callback(stop_daemon, s.daemon)
        s.daemon.start()
        cleanup.callback(s.nginx.stop)
        s.nginx.start(s.ca.cert)
        cleanup.callback(s.caddy.stop)
        s.caddy.start(s.ca.cert)
        # The GitHub provider, as an operator configures it: the v2 API, over TLS.
        created = requests.post(
            f"{s.public_url}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/defaultSupportedIdpConfigs",
            params={"idpId": "github.com"}, headers=ADMIN, verify=str(s.ca.cert), timeout=30,
            json={"enabled": True, "clientId": GITHUB_CLIENT_ID, "clientSecret": GITHUB_SECRET})
        assert created.status_code == 200, created.text
        assert GITHUB_SECRET not in created.text
        yield s


@pytest.fixture(autouse=True)
def children_alive(stack):
    """After each test: Hearth and the proxies still run (a failure then names the culprit)."""
    yield
    code = stack.daemon.process.poll()
    assert code is None, f"hearth serve exited ({code}) during the test"
    for proxy in (stack.nginx, stack.caddy):
        assert proxy.child.running(), f"{proxy.child.name} exited during the test:\n{proxy.log()}"


def stop_daemon(daemon):
    if daemon.process is not None and daemon.process.poll() is None:
        try:
            daemon.stop()
        except Exception:
            daemon.kill()
            raise


@pytest.fixture(scope="module")
def bridge(stack):
    """`hearth bridge` to nginx, trusting the test's CA."""
    instance = Bridge(stack.root, stack.nginx.url, ca_file=stack.ca.cert).start()
    yield instance
    instance.stop()


@contextlib.contextmanager
def running(bridge):
    """A bridge for one test, stopped (SIGTERM, exit 0) after it."""
    bridge.start()
    try:
        yield bridge
    finally:
        bridge.stop()


class Endpoint:
    """Where an SDK's calls go: the proxy's https URL (verified with the CA), or the bridge's
    plain http one."""

    def __init__(self, base, verify=True):
        self.base = base
        self.verify = verify

    def post(self, path, body=None, key=True, headers=None, data=None, timeout=30):
        return requests.post(self.base + path, params={"key": API_KEY} if key else None, json=body, data=data,
                             headers=headers, verify=self.verify, timeout=timeout)

    def get(self, path, **options):
        options.setdefault("timeout", 30)
        return requests.get(self.base + path, verify=self.verify, **options)


def through(stack, name):
    return Endpoint(stack.nginx.url if name == "nginx" else stack.caddy.url, str(stack.ca.cert))


def ok(reply):
    assert reply.status_code == 200, f"{reply.request.method} {reply.url}: {reply.status_code} {reply.text[:800]}"
    return reply.json()


def unique(name):
    return f"{name}-{time.monotonic_ns()}@tls.example"


def envelope(reply, code):
    """The Firebase error envelope with `code`; its message."""
    assert reply.status_code == code, f"{reply.status_code} {reply.text[:500]}"
    error = reply.json()["error"]
    assert error["code"] == code, error
    return error["message"]


def client_in_log(stack, request_id, deadline_seconds=5):
    """The `client` Hearth logged for the request with this id."""
    def logged():
        stack.daemon.log.flush()
        with open(stack.daemon.log_path, errors="replace") as log:
            for line in log:
                if request_id in line and line.startswith("{"):
                    entry = json.loads(line)
                    if entry.get("requestId") == request_id and "client" in entry:
                        return [entry["client"]]  # whatever it is, even empty
        return None

    return eventually(logged, timeout=deadline_seconds, message=f"a log line for request {request_id}")[0]


# --- Through the proxies directly ---------------------------------------------------------------

def test_nginx_serves_password_accounts_over_https(stack):
    api = through(stack, "nginx")
    email = unique("pat")
    created = ok(api.post(V1 + "signUp", {"email": email, "password": "first-pass-1", "returnSecureToken": True}))
    signed_in = ok(api.post(V1 + "signInWithPassword", {"email": email, "password": "first-pass-1", "returnSecureToken": True}))
    assert signed_in["localId"] == created["localId"]
    # The web SDK's refresh: a form, snake_case.
    refreshed = ok(api.post(TOKEN, data={"grant_type": "refresh_token", "refresh_token": signed_in["refreshToken"]}))
    assert refreshed["user_id"] == created["localId"]
    looked_up = ok(api.post(V1 + "lookup", {"idToken": refreshed["id_token"]}))
    assert looked_up["users"][0]["email"] == email
    wrong = api.post(V1 + "signInWithPassword", {"email": email, "password": "wrong-pass-1"})
    assert wrong.status_code == 400 and wrong.json()["error"]["message"] == "INVALID_LOGIN_CREDENTIALS"


@pytest.mark.parametrize("proxy", ["nginx", "caddy"])
def test_the_proxy_redirects_http_speaks_tls_1_2_up_and_sets_hsts(stack, proxy):
    server = getattr(stack, proxy)
    api = through(stack, proxy)
    health = api.get("/healthz")
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert health.headers["Strict-Transport-Security"] == "max-age=63072000"
    # Hearth's own errors come through as they are, with HSTS too.
    missing = api.post(V1 + "lookup", {"idToken": "not-a-token"})
    assert missing.status_code == 400 and "Strict-Transport-Security" in missing.headers
    redirected = requests.get(f"http://localhost:{server.http_port}/healthz?x=1", allow_redirects=False, timeout=10)
    assert redirected.status_code in (301, 308), redirected.status_code
    location = redirected.headers["Location"]
    assert location.startswith("https://localhost") and location.endswith("/healthz?x=1"), location

    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        context = ssl.create_default_context(cafile=str(stack.ca.cert))
        context.minimum_version = context.maximum_version = version
        with socket.create_connection(("127.0.0.1", server.https_port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                assert tls.version() == version.name.replace("_", ".")
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.check_hostname, old.verify_mode = False, ssl.CERT_NONE
    old.set_ciphers("DEFAULT@SECLEVEL=0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old.minimum_version, old.maximum_version = ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1
    with socket.create_connection(("127.0.0.1", server.https_port), timeout=10) as raw:
        with pytest.raises(ssl.SSLError):
            old.wrap_socket(raw, server_hostname="localhost")


@pytest.mark.parametrize("proxy", ["nginx", "caddy"])
def test_a_client_can_not_choose_the_address_hearth_counts_it_by(stack, proxy):
    """Hearth trusts X-Forwarded-For from 127.0.0.1 (the proxy); the proxy sets it to the TCP
    peer, whatever the client sent (here the client is on loopback too, so a header passed on
    would have been believed)."""
    api = through(stack, proxy)
    reply = api.post(V1 + "createAuthUri", {"identifier": "someone@tls.example", "continueUri": "http://localhost"},
                     headers={"X-Forwarded-For": "203.0.113.7"})
    assert reply.status_code == 200, reply.text
    assert client_in_log(stack, reply.headers["X-Request-Id"]) == "127.0.0.1"


@pytest.mark.parametrize("proxy", ["nginx", "caddy"])
def test_bodies_up_to_hearths_limit_pass_and_larger_ones_are_refused(stack, proxy):
    api = through(stack, proxy)
    # Under Hearth's 1 MiB (1,048,576 bytes): an unknown field is ignored, the sign-up served.
    body = {"email": unique("big"), "password": "big-pass-1", "returnSecureToken": True, "padding": "x" * 1_000_000}
    ok(api.post(V1 + "signUp", body))
    # Over it, within the proxy's margin: Hearth's own refusal, in its envelope.
    body["padding"] = "x" * 1_070_000
    refused = api.post(V1 + "signUp", body)
    assert refused.status_code == 413 and refused.json()["error"]["code"] == 413, refused.text[:300]
    # Well over: the proxy refuses it (Caddy 2.6, Debian 12's, says 502 when its limit cuts a
    # body short: caddyserver/caddy#5652; later versions 413).
    body["padding"] = "x" * 2_000_000
    assert api.post(V1 + "signUp", body).status_code in ((413,) if proxy == "nginx" else (413, 502))


def test_caddy_serves_sign_up_and_lookup(stack):
    api = through(stack, "caddy")
    email = unique("cady")
    created = ok(api.post(V1 + "signUp", {"email": email, "password": "caddy-pass-1", "returnSecureToken": True}))
    looked_up = ok(api.post(V1 + "lookup", {"idToken": created["idToken"]}))
    assert looked_up["users"][0]["localId"] == created["localId"]


def test_headful_github_sign_in_through_nginx(stack):
    api = through(stack, "nginx")
    app = github_headful(f"{stack.public_url}/__/auth/handler?{handler_query(API_KEY, 'nginx-octo')}",
                         stack.github, stack.public_url, stack.ca.cert)
    assert app["authType"] == "signInWithRedirect" and "link" in app, app
    signed_in = ok(api.post(V1 + "signInWithIdp", {
        "requestUri": app["link"], "sessionId": SESSION_ID, "postBody": "providerId=github.com",
        "returnSecureToken": True, "returnIdpCredential": True}))
    assert signed_in["providerId"] == "github.com" and signed_in["screenName"] == "nginx-octo"
    assert signed_in["email"] == "nginx-octo@github.example" and signed_in["isNewUser"] is True
    # The code was spent: the same link again is refused.
    again = api.post(V1 + "signInWithIdp", {"requestUri": app["link"], "sessionId": SESSION_ID,
                                           "postBody": "providerId=github.com"})
    assert again.json()["error"]["message"].startswith("INVALID_IDP_RESPONSE")


@pytest.mark.parametrize("proxy", ["nginx", "caddy"])
def test_200_concurrent_clients_through_the_proxy(stack, proxy):
    concurrent_lookups(stack, through(stack, proxy))


def concurrent_lookups(stack, api, clients=200):
    created = ok(api.post(V1 + "signUp", {"email": unique("crowd"), "password": "crowd-pass-1", "returnSecureToken": True}))
    start = threading.Barrier(clients)
    statuses = []

    def one():
        start.wait(timeout=60)
        try:
            # requests.post opens its own connection each time.
            statuses.append(api.post(V1 + "lookup", {"idToken": created["idToken"]}, timeout=60).status_code)
        except requests.RequestException as error:
            statuses.append(repr(error))

    threads = [threading.Thread(target=one) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    failures = [status for status in statuses if status != 200]
    assert len(statuses) == clients and not failures, f"{len(failures)} of {clients} not served: {failures[:3]}"


# --- Through hearth bridge ----------------------------------------------------------------------

def test_the_bridge_serves_the_ios_sdks_calls(stack, bridge):
    api = Endpoint(bridge.url)
    email = unique("ios")
    # The iOS SDK's legacy paths, and its JSON refresh.
    created = ok(api.post(V3 + "signupNewUser", {"email": email, "password": "ios-pass-1", "returnSecureToken": True}))
    signed_in = ok(api.post(V3 + "verifyPassword", {"email": email, "password": "ios-pass-1", "returnSecureToken": True}))
    assert signed_in["localId"] == created["localId"]
    refreshed = ok(api.post(TOKEN, {"grantType": "refresh_token", "refreshToken": signed_in["refreshToken"]}))
    assert refreshed["user_id"] == created["localId"]
    looked_up = ok(api.post(V3 + "getAccountInfo", {"idToken": refreshed["id_token"]}))
    assert looked_up["users"][0]["email"] == email
    # And the v1 paths other SDKs use.
    assert ok(api.post(V1 + "lookup", {"idToken": created["idToken"]}))["users"][0]["localId"] == created["localId"]
    wrong = api.post(V1 + "signInWithPassword", {"email": email, "password": "wrong-pass-1"})
    assert envelope(wrong, 400) == "INVALID_LOGIN_CREDENTIALS"


def test_an_email_link_signs_in_through_the_bridge(stack, bridge):
    api = Endpoint(bridge.url)
    email = unique("link")
    # Production mails links; the admin route hands one back instead (no SMTP relay needed).
    sent = ok(api.post(f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:sendOobCode", key=False,
                       headers=ADMIN, body={
                           "requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": True,
                           "continueUrl": "https://app.example.com/finish", "canHandleCodeInApp": True,
                           "iOSBundleId": BUNDLE_ID}))
    link = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(sent["oobLink"]).query))
    assert link["mode"] == "signIn" and link["oobCode"] == sent["oobCode"]
    # The iOS SDK completes it on its legacy path.
    signed_in = ok(api.post(V3 + "emailLinkSignin", {"email": email, "oobCode": link["oobCode"]}))
    assert signed_in["email"] == email and signed_in["isNewUser"] is True
    assert ok(api.post(V1 + "lookup", {"idToken": signed_in["idToken"]}))["users"][0]["emailVerified"] is True
    # A link is good once.
    assert envelope(api.post(V1 + "signInWithEmailLink", {"email": email, "oobCode": link["oobCode"]}), 400) \
        .startswith("INVALID_OOB_CODE")


def test_headful_github_sign_in_through_the_bridge(stack, bridge):
    """The SDK in emulator mode opens the handler on the bridge; the browser goes to GitHub, which
    sends it back to publicUrl (the TLS proxy); the app finishes on the bridge."""
    api = Endpoint(bridge.url)
    app = github_headful(f"{bridge.url}/emulator/auth/handler?{handler_query(API_KEY, 'bridge-octo')}",
                         stack.github, stack.public_url, stack.ca.cert)
    signed_in = ok(api.post(V3 + "verifyAssertion", {
        "requestUri": app["link"], "sessionId": SESSION_ID, "postBody": "providerId=github.com",
        "returnSecureToken": True, "returnIdpCredential": True}))
    assert signed_in["providerId"] == "github.com" and signed_in["email"] == "bridge-octo@github.example"
    # The wrong session id (another app's) is refused.
    other = github_headful(f"{bridge.url}/emulator/auth/handler?{handler_query(API_KEY, 'bridge-octo')}",
                           stack.github, stack.public_url, stack.ca.cert)
    refused = api.post(V1 + "signInWithIdp", {"requestUri": other["link"], "sessionId": "ASDFGHJKLZ",
                                             "postBody": "providerId=github.com"})
    assert envelope(refused, 400).startswith("MISSING_OR_INVALID_NONCE")


def test_the_bridge_checks_the_pin(stack):
    good = Bridge(stack.root, stack.nginx.url, ca_file=stack.ca.cert, pins=[stack.server.pin])
    with running(good):
        assert Endpoint(good.url).get("/healthz").status_code == 200
        ok(Endpoint(good.url).post(V1 + "signUp", {"email": unique("pin"), "password": "pin-pass-1"}))
    wrong = Bridge(stack.root, stack.nginx.url, ca_file=stack.ca.cert, pins=[stack.other_server.pin])
    with running(wrong):
        reply = Endpoint(wrong.url).post(V1 + "signUp", {"email": unique("nopin"), "password": "pin-pass-1"}, timeout=10)
        message = envelope(reply, 503)
        assert message.startswith("UNAVAILABLE") and "pin" in message.lower(), message


class OtherCAServer:
    """An https server with the unrelated CA's certificate, answering 200 to anything."""

    def __init__(self, certificate):
        impostor = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                impostor.hits += 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_POST = do_GET

        self.hits = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(certificate.cert), str(certificate.key))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://localhost:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_the_bridge_refuses_an_upstream_certified_by_another_ca(stack):
    impostor = OtherCAServer(stack.other_server)
    try:
        for bridge in (Bridge(stack.root, impostor.url, ca_file=stack.ca.cert),
                       # Hearth's real proxy, but the bridge told to trust another CA.
                       Bridge(stack.root, stack.nginx.url, ca_file=stack.other_ca.cert)):
            with running(bridge):
                started = time.monotonic()
                message = envelope(Endpoint(bridge.url).post(V1 + "lookup", {"idToken": "x"}, timeout=10), 503)
                assert message.startswith("UNAVAILABLE") and "certificate" in message.lower(), message
                assert time.monotonic() - started < 5
        assert impostor.hits == 0, "a request reached the server the bridge should not trust"
    finally:
        impostor.close()


def test_the_bridge_answers_503_when_the_upstream_is_down(stack):
    down = Bridge(stack.root, f"https://localhost:{free_tcp_port()}", ca_file=stack.ca.cert)
    with running(down):
        started = time.monotonic()
        message = envelope(Endpoint(down.url).post(V1 + "signUp", {}, timeout=10), 503)
        assert message.startswith("UNAVAILABLE"), message
        assert time.monotonic() - started < 5


def test_the_bridge_serves_only_its_own_loopback_host(stack, bridge):
    for host in (f"evil.example:{bridge.port}", f"127.0.0.1:{free_tcp_port()}", "localhost", f"localhost:{bridge.port}"):
        reply = requests.post(f"{bridge.url}{V1}signUp", params={"key": API_KEY}, json={}, headers={"Host": host}, timeout=10)
        message = envelope(reply, 403)
        assert message, host
    # Its own is served.
    assert Endpoint(bridge.url).get("/healthz").status_code == 200


def test_the_bridge_listens_on_loopback_only(stack):
    for listen in ("0.0.0.0:0", "[::]:0"):
        refused = subprocess.run([BINARY, "bridge", "--listen", listen, "--upstream", stack.nginx.url,
                                  "--ca-file", str(stack.ca.cert)], capture_output=True, text=True, timeout=30)
        assert refused.returncode != 0, listen
        assert "loopback" in (refused.stderr + refused.stdout).lower(), refused.stderr


def test_a_1_mib_body_passes_the_bridge(stack, bridge):
    api = Endpoint(bridge.url)
    body = {"email": unique("bulk"), "password": "bulk-pass-1", "returnSecureToken": True, "padding": "x" * 1_000_000}
    assert len(json.dumps(body)) < 1_048_576
    created = ok(api.post(V1 + "signUp", body, timeout=60))
    assert ok(api.post(V1 + "lookup", {"idToken": created["idToken"]}))["users"][0]["email"] == body["email"]


def raw_exchange(port, payload, wait_for=None):
    """Bytes to the bridge on one connection; everything it answers until it closes or goes
    quiet. With `wait_for`, `payload` is a pair sent either side of that reply (Expect)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        first, rest = payload if wait_for else (payload, b"")
        sock.sendall(first)
        received = b""
        if wait_for:
            while wait_for not in received:
                chunk = sock.recv(65536)
                assert chunk, received
                received += chunk
            sock.sendall(rest)
        sock.settimeout(3)
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        except socket.timeout:
            pass
        return received


def test_the_bridge_frames_what_clients_send_as_they_send_it(stack, bridge):
    """Pipelined requests each get their whole answer; a chunked body (spelled `Chunked`) arrives
    whole; a client that waits for `100 Continue` gets it."""
    host = f"Host: 127.0.0.1:{bridge.port}\r\n"
    body = json.dumps({"returnSecureToken": True}).encode()
    signup = (f"POST {V1}signUp?key={API_KEY} HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
              f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    answered = raw_exchange(bridge.port, signup + signup + signup.replace(b"HTTP/1.1\r\n", b"HTTP/1.1\r\nConnection: close\r\n", 1))
    assert answered.count(b"HTTP/1.1 200 OK") == 3 and answered.count(b'"idToken"') == 3, answered[:600]

    chunked = (f"POST {V1}signUp?key={API_KEY} HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
               f"Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n").encode()
    chunked += b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in (body[:5], body[5:])) + b"0\r\n\r\n"
    answered = raw_exchange(bridge.port, chunked)
    assert answered.startswith(b"HTTP/1.1 200 OK") and answered.count(b'"idToken"') == 1, answered[:600]

    expecting = (f"POST {V1}signUp?key={API_KEY} HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n").encode()
    answered = raw_exchange(bridge.port, (expecting, body), wait_for=b"100 Continue\r\n\r\n")
    assert answered.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK"), answered[:300]

    for target in (f"/../{V1}lookup", "http://169.254.169.254/", "*"):
        answered = raw_exchange(bridge.port, f"GET {target} HTTP/1.1\r\n{host}\r\n".encode())
        assert answered.startswith(b"HTTP/1.1 400"), (target, answered[:200])
    answered = raw_exchange(bridge.port, f"TRACE / HTTP/1.1\r\n{host}\r\n".encode())
    assert answered.startswith(b"HTTP/1.1 405"), answered[:200]


def test_200_concurrent_clients_through_the_bridge(stack, bridge):
    concurrent_lookups(stack, Endpoint(bridge.url))


def test_the_admin_sdk_through_the_bridge(stack, bridge, monkeypatch):
    monkeypatch.setenv("FIREBASE_AUTH_EMULATOR_HOST", f"127.0.0.1:{bridge.port}")
    # In emulator mode the SDK sends `Bearer owner` whatever credential it has: the development
    # profile's, which production refuses.
    plain = firebase_admin.initialize_app(options={"projectId": PROJECT}, name=f"tls-owner-{bridge.port}")
    try:
        with pytest.raises(firebase_admin.exceptions.UnauthenticatedError):
            auth.create_user(email=unique("owner"), password="owner-pass-1", app=plain)
    finally:
        firebase_admin.delete_app(plain)

    # The sidecar exchanges it for the operator's token, for the local users it allows (this one).
    token_file = stack.root / "admin-token"
    token_file.write_text(ADMIN_TOKEN + "\n")
    someone_else = Bridge(stack.root, stack.nginx.url, ca_file=stack.ca.cert,
                          extra=["--admin-token-file", str(token_file), "--allow-uid", str(os.getuid() + 1)])
    with running(someone_else):
        with pytest.raises(requests.ConnectionError):
            Endpoint(someone_else.url).post(V1 + "lookup", {"localId": ["x"]}, headers={"Authorization": "Bearer owner"})
    sidecar = Bridge(stack.root, stack.nginx.url, ca_file=stack.ca.cert,
                     extra=["--admin-token-file", str(token_file), "--allow-uid", str(os.getuid())])
    with running(sidecar):
        monkeypatch.setenv("FIREBASE_AUTH_EMULATOR_HOST", f"127.0.0.1:{sidecar.port}")
        app = firebase_admin.initialize_app(options={"projectId": PROJECT}, name=f"tls-bridge-{sidecar.port}")
        try:
            email = unique("admin")
            user = auth.create_user(email=email, password="admin-pass-1", display_name="Bridged", app=app)
            fetched = auth.get_user(user.uid, app=app)
            assert fetched.email == email and fetched.display_name == "Bridged"
            listed = [record.uid for record in auth.list_users(app=app).iterate_all()]
            assert user.uid in listed
            auth.delete_user(user.uid, app=app)
            with pytest.raises(auth.UserNotFoundError):
                auth.get_user(user.uid, app=app)
            # The user signs in no more, through the proxy either.
            gone = through(stack, "nginx").post(V1 + "signInWithPassword", {"email": email, "password": "admin-pass-1"})
            assert gone.status_code == 400
        finally:
            firebase_admin.delete_app(app)
