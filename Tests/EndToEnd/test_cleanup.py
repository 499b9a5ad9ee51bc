"""Seed 003's anonymous cleanup run by the real daemon, with a period of two seconds declared in
the config file's projects section: the purge ends the account's sessions at once, and the
operator's tools (hearth cleanup, hearth project, hearth audit) show and prove it."""

import json
import subprocess

import requests

from conftest import BINARY, PROJECT, Daemon, free_port
from waiting import eventually

KEY = "?key=e2e-key"


def sign_up(daemon, body=None):
    reply = requests.post(
        daemon.url + "/identitytoolkit.googleapis.com/v1/accounts:signUp" + KEY, json=body or {"returnSecureToken": True})
    assert reply.status_code == 200, reply.text
    return reply.json()


def lookup(daemon, id_token):
    return requests.post(daemon.url + "/identitytoolkit.googleapis.com/v1/accounts:lookup" + KEY, json={"idToken": id_token})


def hearth(*arguments):
    return subprocess.run([BINARY, *arguments], capture_output=True, text=True, timeout=60)


def test_the_daemon_purges_anonymous_accounts_and_the_tools_prove_it(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    config = tmp_path / "hearth.json"
    config.write_text(json.dumps({
        "projects": {PROJECT: {"autodeleteAnonymousUsers": True, "anonymousCleanupAfterSeconds": "2"}},
    }))
    daemon = Daemon(str(data), free_port(), env={"HEARTH_CONFIG": str(config)})
    daemon.start()
    try:
        anonymous = sign_up(daemon)
        upgraded = sign_up(daemon)
        linked = requests.post(
            daemon.url + "/identitytoolkit.googleapis.com/v1/accounts:update" + KEY,
            json={"idToken": upgraded["idToken"], "email": "kept@example.com", "password": "correct-horse-42",
                  "returnSecureToken": True})
        assert linked.status_code == 200, linked.text

        eventually(lambda: lookup(daemon, anonymous["idToken"]).status_code != 200, timeout=15, interval=0.1,
                   message="the anonymous account to be purged")
        gone = lookup(daemon, anonymous["idToken"])
        assert gone.json()["error"]["message"] == "USER_NOT_FOUND"
        refreshed = requests.post(
            daemon.url + "/securetoken.googleapis.com/v1/token" + KEY,
            data={"grant_type": "refresh_token", "refresh_token": anonymous["refreshToken"]})
        assert refreshed.status_code == 400
        # The account that linked a method stays, though it was due at the same time.
        assert lookup(daemon, linked.json()["idToken"]).status_code == 200
        metrics = requests.get(daemon.url + "/metrics", timeout=10).text
        assert "hearth_cleanup_purged_total 1" in metrics, metrics[:3000]

        status = hearth("cleanup", "status", "--data", str(data), "--project", PROJECT, "--json")
        assert status.returncode == 0, status.stderr
        numbers = json.loads(status.stdout)
        assert numbers["enabled"] is True and numbers["purgedLast30Days"] == 1 and numbers["scheduled"] == 0

        replay = hearth("audit", "replay", "--data", str(data), "--project", PROJECT, "--uid", anonymous["localId"])
        assert replay.returncode == 0, replay.stderr
        purge = json.loads(replay.stdout.splitlines()[-1])
        assert purge["type"] == "account.anonymous_purged"
        assert purge["metadata"]["actor"] == "scheduler"
        assert purge["payload"]["rule"] == "created_while_cleanup_on"
        assert purge["payload"]["dueAt"] - purge["payload"]["since"] == 2000

        # Changed through the daemon (its writer), seen in the data directory, traced in history.
        changed = hearth("project", "set", "--project", PROJECT, "--config", str(config),
                         "--daemon", f"127.0.0.1:{daemon.port}", "autodeleteAnonymousUsers=false")
        assert changed.returncode == 0, changed.stderr
        assert json.loads(changed.stdout)["autodeleteAnonymousUsers"] is False
        shown = hearth("project", "show", "--data", str(data), "--project", PROJECT)
        assert json.loads(shown.stdout)["autodeleteAnonymousUsers"] is False
        history = hearth("project", "history", "--data", str(data), "--project", PROJECT).stdout.splitlines()
        assert len(history) == 2
        assert "by system:config file" in history[0] and "by admin:owner" in history[1]

        # The config file seeds only a project without settings: after a restart the ledger's stand.
        daemon.restart()
        config_now = requests.get(
            daemon.url + f"/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/config",
            headers={"Authorization": "Bearer owner"}).json()
        assert config_now["autodeleteAnonymousUsers"] is False
        refused = hearth("project", "set", "--project", PROJECT, "--config", str(config),
                         "--daemon", f"127.0.0.1:{daemon.port}", "colour=blue")
        assert refused.returncode != 0 and "colour" in refused.stderr
    finally:
        daemon.stop()
