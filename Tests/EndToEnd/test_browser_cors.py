"""A web app in a real browser calls Hearth from another origin, as the Firebase JS SDK does.

Headless Chromium (Debian's) loads a page served on one origin that calls `signUp`,
`signInWithPassword` and `lookup` on Hearth, on another, with `fetch` and the SDK's headers
(so every call is preflighted); the test reads what the page got from its DOM.
"""

import html
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading

import pytest

from conftest import Daemon, free_port

API_KEY = "browser-test-key"
ADMIN_TOKEN = "browser-test-admin-token-0123456789"

PAGE = """<!doctype html>
<html><body><pre id="out">pending</pre>
<script>
const base = %(hearth)s + "/identitytoolkit.googleapis.com/v1/accounts:";
async function call(method, body) {
  const response = await fetch(base + method + "?key=" + %(key)s, {
    method: "POST",
    headers: {"Content-Type": "application/json", "X-Client-Version": "Chrome/JsCore/11.0.0/FirebaseCore-web"},
    body: JSON.stringify(body),
  });
  return {status: response.status, body: await response.json()};
}
(async () => {
  const out = {};
  try {
    const account = {email: "browser@example.com", password: "browser-pass-1", returnSecureToken: true};
    const signedUp = await call("signUp", account);
    out.signUp = signedUp.status;
    const signedIn = await call("signInWithPassword", account);
    out.signIn = signedIn.status;
    const looked = await call("lookup", {idToken: signedIn.body.idToken});
    out.lookup = looked.status;
    out.email = looked.body.users[0].email;
    // Errors are readable too: the SDK maps their codes.
    out.duplicate = (await call("signUp", account)).body.error.message;
  } catch (error) {
    out.failed = String(error);
  }
  document.getElementById("out").textContent = JSON.stringify(out);
})();
</script></body></html>
"""


def serve_page(root, hearth_url):
    """Serves the app's page on a port of its own: another origin than Hearth's."""
    with open(os.path.join(root, "index.html"), "w") as page:
        page.write(PAGE % {"hearth": json.dumps(hearth_url), "key": json.dumps(API_KEY)})
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=root)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def page_result(url):
    """What the page wrote, after Chromium ran it to completion."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is missing: scripts/install-dependencies --tests installs it"
    with tempfile.TemporaryDirectory(prefix="hearth-chromium-") as profile:
        dumped = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
             "--virtual-time-budget=20000", "--dump-dom", url],
            capture_output=True, text=True, timeout=90,
        )
    found = re.search(r'<pre id="out">(.*?)</pre>', dumped.stdout, re.S)
    assert found, dumped.stdout[-2000:] + dumped.stderr[-2000:]
    text = html.unescape(found.group(1))
    assert text != "pending", "the page never finished"
    return json.loads(text)


@pytest.fixture
def root():
    with tempfile.TemporaryDirectory(prefix="hearth-browser-") as directory:
        yield directory


def start(root, env):
    data_dir = os.path.join(root, "data")
    os.makedirs(data_dir)
    daemon = Daemon(data_dir, free_port(), env=env)
    daemon.start()
    return daemon


def test_a_web_app_on_another_origin_signs_up_signs_in_and_looks_up(root):
    daemon = start(root, {})
    os.makedirs(os.path.join(root, "www"))
    page = serve_page(os.path.join(root, "www"), daemon.url)
    try:
        result = page_result(f"http://localhost:{page.server_address[1]}/index.html")
        assert result == {"signUp": 200, "signIn": 200, "lookup": 200, "email": "browser@example.com",
                          "duplicate": "EMAIL_EXISTS"}, result
    finally:
        page.shutdown()
        daemon.stop()


def test_production_answers_only_the_projects_authorized_domains(root):
    daemon = start(root, {"HEARTH_PROFILE": "production", "HEARTH_API_KEYS": f'{{"{API_KEY}": "demo-hearth"}}',
                          "HEARTH_ADMIN_TOKENS": ADMIN_TOKEN})
    os.makedirs(os.path.join(root, "www"))
    page = serve_page(os.path.join(root, "www"), daemon.url)
    port = page.server_address[1]
    try:
        # localhost is an authorized domain by default; 127.0.0.1 is not, so the browser is refused.
        allowed = page_result(f"http://localhost:{port}/index.html")
        assert allowed["signUp"] == 200 and allowed["lookup"] == 200 and allowed["duplicate"] == "EMAIL_EXISTS", allowed
        refused = page_result(f"http://127.0.0.1:{port}/index.html")
        assert set(refused) == {"failed"} and "Failed to fetch" in refused["failed"], refused
    finally:
        page.shutdown()
        daemon.stop()
