"""hearth backup and hearth restore against the real daemon: a backup taken under write load
holds every sign-up acknowledged before it began, restores elsewhere with a verifying chain,
the same projection digest and the same keys; restore never touches a live data directory."""

import json
import os
import subprocess
import threading
import time

import firebase_admin
import requests
from firebase_admin import auth

from conftest import BINARY, PROJECT, Daemon, free_port

KEY = {"key": "e2e-key"}


def hearth(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def sign_up(session, url):
    return session.post(f"{url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params=KEY, json={}, timeout=10)


def test_backup_under_write_load_restores_every_acknowledged_event(daemon, admin, tmp_path):
    # A sealed client secret makes the secrets key exist; a token proves the signing key.
    auth.create_oidc_provider_config(
        "oidc.backup", client_id="backup-client", issuer="https://issuer.example.com", display_name="Backup",
        client_secret="backup-secret", code_response_type=True, id_token_response_type=False, app=admin,
    )
    token = sign_up(requests.Session(), daemon.url).json()["idToken"]

    acknowledged, stop, lock = [], threading.Event(), threading.Lock()

    def sign_up_until_stopped():
        session = requests.Session()
        while not stop.is_set():
            resp = sign_up(session, daemon.url)
            assert resp.status_code == 200, resp.text
            with lock:
                acknowledged.append((time.monotonic(), resp.json()["localId"]))

    threads = [threading.Thread(target=sign_up_until_stopped) for _ in range(6)]
    for thread in threads:
        thread.start()
    while len(acknowledged) < 300:
        time.sleep(0.02)

    backup_dir = tmp_path / "backup"
    began = time.monotonic()
    made = hearth("backup", "--data", daemon.data_dir, "--to", str(backup_dir))
    ended = time.monotonic()
    with lock:
        during_backup = sum(1 for at, _ in acknowledged if began <= at <= ended)
    time.sleep(0.3)
    stop.set()
    for thread in threads:
        thread.join()
    assert made.returncode == 0, made.stdout + made.stderr
    before_backup = [uid for at, uid in acknowledged if at < began]
    assert len(before_backup) >= 300
    print(f"{len(before_backup)} sign-ups before the backup, {during_backup} during it")

    manifest = json.loads((backup_dir / "hearth-backup.json").read_text())
    names = {f["name"] for f in manifest["files"]}
    assert names == {"data.mdb", "signing-key-rs256.pem", "secrets-key"}, names
    assert sorted(os.listdir(backup_dir)) == sorted(names | {"hearth-backup.json"})
    for name in names - {"data.mdb"}:
        assert (backup_dir / name).read_bytes() == open(os.path.join(daemon.data_dir, name), "rb").read()
        assert oct((backup_dir / name).stat().st_mode & 0o777) == "0o600"

    # Never over the live directory, with or without --replace.
    for extra in ([], ["--replace"]):
        refused = hearth("restore", "--from", str(backup_dir), "--data", daemon.data_dir, *extra)
        assert refused.returncode != 0 and "in use" in refused.stderr, refused.stderr

    restored_dir = str(tmp_path / "restored")
    restored = hearth("restore", "--from", str(backup_dir), "--data", restored_dir)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert manifest["projectionDigest"] in restored.stdout

    verify = hearth("audit", "verify", "--data", restored_dir)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    digest = hearth("projections", "digest", "--data", restored_dir)
    assert digest.stdout.strip() == manifest["projectionDigest"]
    rebuilt = hearth("projections", "rebuild", "--data", restored_dir)
    assert "matches the projections it replaced" in rebuilt.stdout, rebuilt.stdout + rebuilt.stderr

    again = Daemon(restored_dir, free_port())
    again.start()
    try:
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"127.0.0.1:{again.port}"
        app = firebase_admin.initialize_app(options={"projectId": PROJECT}, name=f"restored-{again.port}")
        try:
            found = set()
            for start in range(0, len(before_backup), 100):
                batch = [auth.UidIdentifier(uid) for uid in before_backup[start:start + 100]]
                found |= {user.uid for user in auth.get_users(batch, app=app).users}
            assert found == set(before_backup)
            assert auth.get_oidc_provider_config("oidc.backup", app=app).client_id == "backup-client"
        finally:
            firebase_admin.delete_app(app)
        # Signed by the original daemon, verified by the restored one: the same signing key.
        lookup = requests.post(
            f"{again.url}/identitytoolkit.googleapis.com/v1/accounts:lookup", params=KEY, json={"idToken": token}, timeout=10)
        assert lookup.status_code == 200, lookup.text
    finally:
        again.stop()
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"127.0.0.1:{daemon.port}"


def test_backup_refuses_a_used_target_and_restore_an_interrupted_backup(daemon, tmp_path):
    sign_up(requests.Session(), daemon.url)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine")
    refused = hearth("backup", "--data", daemon.data_dir, "--to", str(occupied))
    assert refused.returncode != 0 and "not empty" in refused.stderr
    assert (occupied / "notes.txt").read_text() == "mine"

    backup_dir = tmp_path / "backup"
    assert hearth("backup", "--data", daemon.data_dir, "--to", str(backup_dir)).returncode == 0
    # A damaged copy is found before anything is restored.
    with open(backup_dir / "data.mdb", "r+b") as ledger:
        ledger.seek(5000)
        byte = ledger.read(1)
        ledger.seek(5000)
        ledger.write(bytes([byte[0] ^ 0xFF]))
    damaged = hearth("restore", "--from", str(backup_dir), "--data", str(tmp_path / "r1"))
    assert damaged.returncode != 0 and "damaged" in damaged.stderr, damaged.stderr
    assert not os.path.exists(tmp_path / "r1" / "data.mdb")
    # Without its manifest (a backup cut short), nothing is restored.
    os.remove(backup_dir / "hearth-backup.json")
    partial = hearth("restore", "--from", str(backup_dir), "--data", str(tmp_path / "r2"))
    assert partial.returncode != 0 and "not a complete Hearth backup" in partial.stderr, partial.stderr
