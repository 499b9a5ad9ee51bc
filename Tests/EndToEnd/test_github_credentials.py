"""GitHub for real, end to end: a fake GitHub API on loopback (its check-a-token API, /user,
/user/emails), the provider configured with `hearth project provider set` through the daemon
(the secret in a file), an app's GitHub access token signed in with signInWithIdp, and the
account read back with the real firebase-admin SDK."""

import base64
import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import firebase_admin
import requests
from firebase_admin import auth

from conftest import BINARY, PROJECT, Daemon, free_port

SECRET = "e2e-github-secret-0123456789"
TOKEN = "gho_e2e_token"


class FakeGitHub(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        basic = "Basic " + base64.b64encode(f"gh-e2e:{SECRET}".encode()).decode()
        if self.path == "/api/v3/applications/gh-e2e/token" and self.headers.get("Authorization") == basic \
                and body.get("access_token") == TOKEN:
            return self.reply(200, {"id": 1, "app": {"client_id": "gh-e2e"}})
        self.reply(404, {"message": "Not Found"})

    def do_GET(self):
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.reply(401, {"message": "Bad credentials"})
        if self.path == "/api/v3/user":
            return self.reply(200, {"id": 9001, "login": "e2e-octo", "name": "E2E Octo", "avatar_url": "https://img.example/e.png"})
        if self.path == "/api/v3/user/emails":
            return self.reply(200, [{"email": "octo@e2e.example", "primary": True, "verified": True}])
        self.reply(404, {"message": "Not Found"})


def test_github_token_signs_in_through_a_configured_provider(tmp_path):
    github = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    threading.Thread(target=github.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{github.server_address[1]}"
    secret_file = tmp_path / "github-secret"
    secret_file.write_text(SECRET + "\n")
    config = tmp_path / "hearth.json"
    config.write_text(json.dumps({
        "identityProviders": {"github.com": {"webUrl": base, "apiUrl": base + "/api/v3"}},
        # Where admins may point secret files through the API (systemd's credentials directory in a unit).
        "secretFilesDirectory": str(tmp_path),
    }))
    data = tmp_path / "data"
    data.mkdir()
    daemon = Daemon(str(data), free_port(), env={"HEARTH_CONFIG": str(config)})
    daemon.start()
    try:
        created = subprocess.run(
            [BINARY, "project", "provider", "--project", PROJECT, "--config", str(config),
             "--daemon", f"127.0.0.1:{daemon.port}", "set", "github.com",
             "enabled=true", "clientId=gh-e2e", f"clientSecretFile={secret_file}"],
            capture_output=True, text=True, timeout=60)
        assert created.returncode == 0, created.stderr
        assert json.loads(created.stdout)["clientSecretFile"] == str(secret_file)
        listed = subprocess.run([BINARY, "project", "providers", "--data", str(data), "--project", PROJECT],
                                capture_output=True, text=True, timeout=60)
        assert json.loads(listed.stdout.splitlines()[0])["name"].endswith("/defaultSupportedIdpConfigs/github.com")
        assert SECRET not in listed.stdout

        signed_in = requests.post(
            daemon.url + "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=e2e",
            json={"requestUri": "http://localhost", "postBody": f"providerId=github.com&access_token={TOKEN}",
                  "returnSecureToken": True, "returnIdpCredential": True})
        assert signed_in.status_code == 200, signed_in.text
        uid = signed_in.json()["localId"]
        stolen = requests.post(
            daemon.url + "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=e2e",
            json={"requestUri": "http://localhost", "postBody": "providerId=github.com&access_token=gho_from_another_app"})
        assert stolen.json()["error"]["message"].startswith("INVALID_IDP_RESPONSE")

        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"127.0.0.1:{daemon.port}"
        admin = firebase_admin.initialize_app(options={"projectId": PROJECT}, name=f"gh-{daemon.port}")
        try:
            user = auth.get_user(uid, app=admin)
            assert user.email == "octo@e2e.example"
            github_info = [info for info in user.provider_data if info.provider_id == "github.com"]
            assert github_info and github_info[0].uid == "9001"
        finally:
            firebase_admin.delete_app(admin)
    finally:
        daemon.stop()
        github.shutdown()
