"""Helpers for test_tls.py: local certificate authorities made with the openssl CLI, the
shipped deploy/nginx/hearth.conf and deploy/caddy/Caddyfile rendered to run unprivileged in a
temporary directory, a fake GitHub OAuth app, `hearth bridge`, and the iOS SDK's headful
sign-in as it drives /__/auth/handler."""

import base64
import hashlib
import json
import os
import queue
import re
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

from conftest import BINARY
from waiting import eventually

REPO = Path(__file__).resolve().parents[2]
NGINX_CONF = REPO / "deploy" / "nginx" / "hearth.conf"
CADDYFILE = REPO / "deploy" / "caddy" / "Caddyfile"
# Debian installs nginx in /usr/sbin, which a user's PATH may lack.
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

# What the iOS SDK sends to /__/auth/handler (HeadfulSignInTests.swift does the same).
SESSION_ID = "QWERTYUIOP"
IOS_CLIENT_ID = "123-abc.apps.googleusercontent.com"
APP_SCHEME = "com.googleusercontent.apps.123-abc"
BUNDLE_ID = "com.example.app"


# --- Certificates -------------------------------------------------------------------------

def openssl(*args, input=None):
    result = subprocess.run(["openssl", *map(str, args)], input=input, capture_output=True, timeout=60)
    assert result.returncode == 0, f"openssl {' '.join(map(str, args))}: {result.stderr.decode(errors='replace')}"
    return result.stdout


class Authority:
    """A certificate authority of its own (P-256), in `directory`."""

    def __init__(self, directory, name):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True)
        self.cert = self.directory / "ca.pem"
        self.key = self.directory / "ca.key"
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", self.key, "-out", self.cert, "-days", "2", "-sha256", "-subj", f"/CN={name}",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def issue(self, name="server"):
        """A server certificate for localhost and 127.0.0.1, laid out as certbot's live directory."""
        live = self.directory / name
        live.mkdir()
        key, csr, cert, extensions = live / "privkey.pem", live / "server.csr", live / "fullchain.pem", live / "ext.cnf"
        extensions.write_text(
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\n"
            "extendedKeyUsage=serverAuth\n"
            "subjectKeyIdentifier=hash\n"
            "authorityKeyIdentifier=keyid:always\n")
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", csr, "-subj", "/CN=localhost")
        openssl("x509", "-req", "-in", csr, "-CA", self.cert, "-CAkey", self.key,
                "-set_serial", str(secrets.randbits(63)), "-days", "2", "-sha256", "-extfile", extensions, "-out", cert)
        return ServerCertificate(cert, key)


class ServerCertificate:
    def __init__(self, cert, key):
        self.cert = cert
        self.key = key

    @property
    def pin(self):
        """The SPKI pin, as HPKP and `hearth bridge --pin-sha256` take it: base64 SHA-256 of the
        DER SubjectPublicKeyInfo (x509 -pubkey | pkey -pubin -outform der | dgst -sha256 -binary | base64)."""
        public_pem = openssl("x509", "-in", self.cert, "-pubkey", "-noout")
        der = openssl("pkey", "-pubin", "-outform", "der", input=public_pem)
        digest = openssl("dgst", "-sha256", "-binary", input=der)
        return openssl("base64", "-A", input=digest).decode().strip()


# --- Child processes ------------------------------------------------------------------------

def free_tcp_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Child:
    """A server run as a child in its own process group (nginx forks workers), its output in a
    log file; `stop` ends it (the group, should it not go)."""

    def __init__(self, name, argv, log_path, env=None, cwd=None):
        self.name = name
        self.log_path = Path(log_path)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=cwd,
                                            start_new_session=True)

    def running(self):
        return self.process.poll() is None

    def log(self):
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def stop(self, timeout=10):
        if self.running():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        # Whatever is left of its group (a worker whose master died), by the group's id: the pid
        # of the process started here.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.running():
            self.process.kill()
        self.process.wait(timeout=timeout)


def wait_https(child, url, ca, deadline_seconds=30):
    """Until `url` answers 200 over TLS verified with `ca` (through to Hearth)."""
    last = None

    def serving():
        nonlocal last
        assert child.running(), f"{child.name} exited during start-up:\n{child.log()}"
        try:
            reply = requests.get(url, verify=str(ca), timeout=2)
            last = reply.status_code
            return reply.status_code == 200
        except requests.RequestException as error:
            last = error
            return False

    eventually(serving, timeout=deadline_seconds,
               message=lambda: f"{child.name} to serve {url} (last: {last}):\n{child.log()}")


def substitute(text, replacements, source):
    """The shipped file with its example values replaced; each must still be in it, so a change to
    the file fails here rather than leaving the test on a config nobody ships."""
    for old, new in replacements:
        assert old in text, f"{old!r} is no longer in {source}"
        text = text.replace(old, new)
    return text


class Proxy:
    """A TLS proxy run as a child: started, seen answering over https, stopped."""

    child = None

    def launch(self, argv, output, ca, **options):
        self.child = Child(type(self).__name__.lower(), argv, output, **options)
        wait_https(self.child, self.url + "/healthz", ca)
        return self

    def stop(self):
        if self.child:
            self.child.stop()


class Nginx(Proxy):
    """The shipped deploy/nginx/hearth.conf, ports, upstream and certificate put in, included
    in an nginx.conf of the test's own (pid, logs and temporary files in `directory`)."""

    def __init__(self, directory, certificate, hearth_port, server_name="localhost"):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True)
        self.http_port, self.https_port = free_tcp_port(), free_tcp_port()
        self.url = f"https://{server_name}:{self.https_port}"
        site = substitute(NGINX_CONF.read_text(), [
            ("server 127.0.0.1:9099;", f"server 127.0.0.1:{hearth_port};"),
            ("listen 80;", f"listen 127.0.0.1:{self.http_port};"),
            ("listen [::]:80;", f"listen [::1]:{self.http_port};"),
            ("listen 443 ssl http2;", f"listen 127.0.0.1:{self.https_port} ssl http2;"),
            ("listen [::]:443 ssl http2;", f"listen [::1]:{self.https_port} ssl http2;"),
            ("/etc/letsencrypt/live/auth.example.com/fullchain.pem", str(certificate.cert)),
            ("/etc/letsencrypt/live/auth.example.com/privkey.pem", str(certificate.key)),
            ("/var/www/letsencrypt", str(self.directory / "acme")),
            ("server_name auth.example.com;", f"server_name {server_name};"),
        ], NGINX_CONF)
        (self.directory / "hearth.conf").write_text(site)
        d = self.directory
        # What Debian's /etc/nginx/nginx.conf sets around sites-enabled (its TLS 1.0 and 1.1
        # included: the site must override them), with the paths in the test's directory.
        (d / "nginx.conf").write_text(f"""
pid {d}/nginx.pid;
error_log {d}/error.log warn;
worker_processes 1;
events {{ worker_connections 4096; }}
http {{
    ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers on;
    default_type application/octet-stream;
    access_log {d}/access.log;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    include {d}/hearth.conf;
}}
""")
        self.argv = [NGINX, "-e", str(d / "error.log"), "-p", str(d), "-c", str(d / "nginx.conf"), "-g", "daemon off;"]

    def start(self, ca):
        checked = subprocess.run(self.argv[:-2] + ["-t", "-q"], capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, f"nginx -t: {checked.stderr}"
        return self.launch(self.argv, self.directory / "nginx.out", ca)

    def log(self):
        error = self.directory / "error.log"
        return error.read_text(errors="replace")[-4000:] if error.exists() else ""


class Caddy(Proxy):
    """The shipped deploy/caddy/Caddyfile with its commented `tls cert key` line in force (no
    ACME in a test), the site's name, ports and upstream put in, the admin endpoint off, and
    HOME and XDG directories in `directory`."""

    def __init__(self, directory, certificate, hearth_port, server_name="localhost"):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True)
        self.http_port, self.https_port = free_tcp_port(), free_tcp_port()
        self.url = f"https://{server_name}:{self.https_port}"
        live = "/etc/letsencrypt/live/auth.example.com"
        rendered = substitute(CADDYFILE.read_text(), [
            (f"# tls {live}/fullchain.pem {live}/privkey.pem", f"tls {certificate.cert} {certificate.key}"),
            ("auth.example.com {", f"{server_name} {{"),
            ("reverse_proxy 127.0.0.1:9099", f"reverse_proxy 127.0.0.1:{hearth_port}"),
            ("\temail ops@example.com\n",
             f"\temail ops@example.com\n\tadmin off\n\thttp_port {self.http_port}\n\thttps_port {self.https_port}\n"
             "\tdefault_bind 127.0.0.1\n\tskip_install_trust\n"),
        ], CADDYFILE)
        (self.directory / "Caddyfile").write_text(rendered)
        home = self.directory / "home"
        self.env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"))

    def start(self, ca):
        return self.launch(["caddy", "run", "--config", str(self.directory / "Caddyfile"), "--adapter", "caddyfile"],
                           self.directory / "caddy.log", ca, env=self.env, cwd=self.directory)

    def log(self):
        return self.child.log() if self.child else ""


# --- hearth bridge --------------------------------------------------------------------------

READY = re.compile(r"hearth bridge listening on http://127\.0\.0\.1:(\d+), forwarding to (\S+)")


def without_privileges():
    """A prefix that runs a command as systemd/hearth-bridge.service does (an empty
    CapabilityBoundingSet=): when the tests run as root, without any capability, so that nothing
    passes here only because root may do it."""
    if os.geteuid() == 0 and shutil.which("setpriv"):
        return ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--"]
    return []


class Bridge:
    """`hearth bridge --listen 127.0.0.1:0 --upstream URL [--ca-file F] [--pin-sha256 P]...`,
    without privileges: the port it reports on stdout when ready."""

    def __init__(self, directory, upstream, ca_file=None, pins=(), listen="127.0.0.1:0", extra=()):
        self.argv = without_privileges() + [BINARY, "bridge", "--listen", listen, "--upstream", upstream, *extra]
        if ca_file:
            self.argv += ["--ca-file", str(ca_file)]
        for pin in pins:
            self.argv += ["--pin-sha256", pin]
        self.log_path = Path(directory) / f"bridge-{secrets.token_hex(4)}.log"
        self.process = None
        self.port = None
        self.lines = queue.Queue()

    def start(self, deadline_seconds=30):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log,
                                        start_new_session=True)
        # Read stdout on a thread: the deadline holds even if the bridge prints nothing, and the
        # pipe never fills afterwards.
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + deadline_seconds
        seen = []
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None and self.lines.empty():
                    break
                continue
            if line is None:
                break
            seen.append(line)
            match = READY.search(line)
            if match:
                self.port = int(match.group(1))
                self.url = f"http://127.0.0.1:{self.port}"
                return self
        exited = self.process.poll()
        self.stop(expect_clean=False)
        what = f"exited ({exited})" if exited is not None else f"did not say it was listening within {deadline_seconds} s"
        raise AssertionError(f"hearth bridge {what}; stdout: {seen!r}; stderr: {self.stderr()}")

    def _read(self):
        for raw in self.process.stdout:
            self.lines.put(raw.decode(errors="replace").rstrip("\n"))
        self.lines.put(None)

    def stderr(self):
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text(errors="replace")[-3000:]

    def stop(self, expect_clean=True):
        """SIGTERM; the bridge exits 0."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.log.close()
        if expect_clean:
            assert code == 0, f"hearth bridge exited {code} on SIGTERM: {self.stderr()}"
        return code


# --- A fake GitHub OAuth app ------------------------------------------------------------------

class FakeGitHub:
    """GitHub's OAuth app flow on loopback over plain http: authorize (the user consents at once;
    the authorize URL's `login`, GitHub's account hint, picks who they are), the token endpoint
    (the client secret, the redirect URI and PKCE's verifier checked; a code is good once),
    `/api/v3/user` and `/api/v3/user/emails`."""

    def __init__(self, client_id, client_secret):
        self.client_id = client_id
        self.client_secret = client_secret
        self.grants = {}
        self.tokens = {}
        self.authorizations = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, body=None, headers=()):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                if url.path == "/login/oauth/authorize":
                    return fake.authorize(self, dict(urllib.parse.parse_qsl(url.query)))
                user = fake.tokens.get(self.headers.get("Authorization", "").removeprefix("Bearer "))
                if user is None:
                    return self.reply(401, {"message": "Bad credentials"})
                if url.path == "/api/v3/user":
                    return self.reply(200, {"id": user["id"], "login": user["login"], "name": user["name"],
                                            "avatar_url": "https://img.example/octo.png", "email": None})
                if url.path == "/api/v3/user/emails":
                    return self.reply(200, [{"email": user["email"], "primary": True, "verified": True}])
                self.reply(404, {"message": "Not Found"})

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                if urllib.parse.urlsplit(self.path).path == "/login/oauth/access_token":
                    return fake.token(self, dict(urllib.parse.parse_qsl(body)))
                self.reply(404, {"message": "Not Found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def user(login):
        return {"id": int(hashlib.sha256(login.encode()).hexdigest()[:8], 16), "login": login,
                "name": login.title(), "email": f"{login}@github.example"}

    def authorize(self, handler, query):
        with self.lock:
            self.authorizations.append(query)
        redirect, state = query.get("redirect_uri"), query.get("state")
        if not redirect or not state or query.get("client_id") != self.client_id:
            return handler.reply(400, {"error": "bad authorize request"})
        code = secrets.token_urlsafe(16)
        with self.lock:
            self.grants[code] = {"redirect_uri": redirect, "challenge": query.get("code_challenge"),
                                 "user": self.user(query.get("login") or "octocat")}
        location = redirect + "?" + urllib.parse.urlencode({"code": code, "state": state})
        handler.reply(302, headers=[("Location", location)])

    def token(self, handler, form):
        with self.lock:
            grant = self.grants.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if (grant is None or form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret
                or form.get("redirect_uri") != grant["redirect_uri"] or grant["challenge"] != challenge):
            # GitHub answers a bad code with 200 and an error.
            return handler.reply(200, {"error": "bad_verification_code"})
        token = "gho_" + secrets.token_urlsafe(24)
        with self.lock:
            self.tokens[token] = grant["user"]
        handler.reply(200, {"access_token": token, "token_type": "bearer", "scope": "read:user,user:email"})


# --- The iOS SDK's headful sign-in ----------------------------------------------------------------

def handler_query(api_key, login, event_id=None):
    """The query the iOS SDK opens /__/auth/handler with (signInWithRedirect-style, GitHub),
    `login` as a custom parameter (GitHub's account hint) so each flow picks its user."""
    return urllib.parse.urlencode([
        ("apiKey", api_key), ("authType", "signInWithRedirect"), ("ibi", BUNDLE_ID),
        ("sessionId", hashlib.sha256(SESSION_ID.encode()).hexdigest()), ("v", "FirebaseAuth.iOS/12.0.0"),
        ("eventId", event_id or secrets.token_hex(5).upper()), ("providerId", "github.com"),
        ("clientId", IOS_CLIENT_ID), ("scopes", ""), ("customParameters", json.dumps({"login": login})),
    ])


def follow(url, verify, expect_prefix):
    """One GET that must redirect; its Location, which must start with `expect_prefix`."""
    reply = requests.get(url, allow_redirects=False, verify=verify, timeout=30)
    assert reply.status_code == 302, f"GET {url}: {reply.status_code} {reply.text[:500]}"
    location = reply.headers["Location"]
    assert location.startswith(expect_prefix), f"GET {url} went to {location}, not {expect_prefix}…"
    return location


def github_headful(handler_url, github, public_url, ca):
    """The browser's part: the handler, GitHub's consent, GitHub's redirect to publicUrl's handler
    (over TLS), the handler's redirect to the app. The app callback's query (`link`, `eventId`…)."""
    authorize = follow(handler_url, str(ca), github.base + "/login/oauth/authorize?")
    asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(authorize).query))
    assert asked["redirect_uri"] == public_url + "/__/auth/handler", asked
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    callback = follow(authorize, True, public_url + "/__/auth/handler?")
    deep_link = follow(callback, str(ca), f"{APP_SCHEME}://firebaseauth/link?deep_link_id=")
    inner = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(deep_link).query))["deep_link_id"]
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(inner).query))
