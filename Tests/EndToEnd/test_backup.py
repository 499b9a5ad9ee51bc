"""hearth backup and hearth restore against the real daemon: a backup taken under write load
holds every sign-up acknowledged before it began, restores elsewhere with a verifying chain,
the same projection digest and the same keys; restore never touches a live data directory, and
a backup that is altered, damaged or made with another key changes nothing at all."""

import base64
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import threading
import time

import firebase_admin
import requests
from firebase_admin import auth

from conftest import BINARY, PROJECT, Daemon, free_port
from waiting import eventually

KEY = {"key": "e2e-key"}


def hearth(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def sign_up(session, url):
    return session.post(f"{url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params=KEY, json={}, timeout=10)


def backup_key(path):
    """A backup key as docs/operations.md makes one (openssl rand -base64 32)."""
    path.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    path.chmod(0o600)
    return str(path)


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
    eventually(lambda: len(acknowledged) >= 300, timeout=60, interval=0.02,
               message=lambda: f"300 acknowledged sign-ups (only {len(acknowledged)})")

    backup_dir = tmp_path / "backup"
    began = time.monotonic()
    key = backup_key(tmp_path / "backup-key")
    made = hearth("backup", "--data", daemon.data_dir, "--to", str(backup_dir), "--key-file", key)
    ended = time.monotonic()
    with lock:
        during_backup = sum(1 for at, _ in acknowledged if began <= at <= ended)
    # The load goes on past the backup's end.
    eventually(lambda: acknowledged[-1][0] > ended, timeout=30, interval=0.02,
               message="a sign-up acknowledged after the backup ended")
    stop.set()
    for thread in threads:
        thread.join()
    assert made.returncode == 0, made.stdout + made.stderr
    before_backup = [uid for at, uid in acknowledged if at < began]
    assert len(before_backup) >= 300
    print(f"{len(before_backup)} sign-ups before the backup, {during_backup} during it")

    manifest = json.loads((backup_dir / "hearth-backup.json").read_text())
    names = {f["name"] for f in manifest["files"]}
    assert names == {"data.mdb", "ledger-key", "signing-key-rs256.pem", "secrets-key"}, names
    assert sorted(os.listdir(backup_dir)) == sorted(names | {"hearth-backup.json", "hearth-backup.json.hmac"})
    # The backup key authenticates the backup and is nowhere in it.
    key_bytes = open(key, "rb").read().strip()
    assert all(key_bytes not in (backup_dir / name).read_bytes() for name in os.listdir(backup_dir))
    for name in names - {"data.mdb"}:
        assert (backup_dir / name).read_bytes() == open(os.path.join(daemon.data_dir, name), "rb").read()
        assert oct((backup_dir / name).stat().st_mode & 0o777) == "0o600"

    # Never over the live directory, with or without --replace.
    for extra in ([], ["--replace"]):
        refused = hearth("restore", "--from", str(backup_dir), "--data", daemon.data_dir, "--key-file", key, *extra)
        assert refused.returncode != 0 and "in use" in refused.stderr, refused.stderr

    restored_dir = str(tmp_path / "restored")
    restored = hearth("restore", "--from", str(backup_dir), "--data", restored_dir, "--key-file", key)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert manifest["projectionDigest"] in restored.stdout
    assert "previous:" not in restored.stdout  # nothing was replaced
    assert sorted(os.listdir(restored_dir)) == ["data.mdb", "hearth.lock", "ledger-key", "secrets-key", "signing-key-rs256.pem"]

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
    key = backup_key(tmp_path / "backup-key")
    refused = hearth("backup", "--data", daemon.data_dir, "--to", str(occupied), "--key-file", key)
    assert refused.returncode != 0 and "not empty" in refused.stderr
    assert (occupied / "notes.txt").read_text() == "mine"

    backup_dir = tmp_path / "backup"
    assert hearth("backup", "--data", daemon.data_dir, "--to", str(backup_dir), "--key-file", key).returncode == 0
    # A damaged copy is found before anything is restored.
    with open(backup_dir / "data.mdb", "r+b") as ledger:
        ledger.seek(5000)
        byte = ledger.read(1)
        ledger.seek(5000)
        ledger.write(bytes([byte[0] ^ 0xFF]))
    damaged = hearth("restore", "--from", str(backup_dir), "--data", str(tmp_path / "r1"), "--key-file", key)
    assert damaged.returncode != 0 and "damaged" in damaged.stderr, damaged.stderr
    assert os.listdir(tmp_path / "r1") == ["hearth.lock"]
    # Without its manifest (a backup cut short), nothing is restored.
    os.remove(backup_dir / "hearth-backup.json")
    partial = hearth("restore", "--from", str(backup_dir), "--data", str(tmp_path / "r2"), "--key-file", key)
    assert partial.returncode != 0 and "not a complete Hearth backup" in partial.stderr, partial.stderr


# --- A restore that fails changes nothing; only the backup key's holder can make one that restores.


def key_args(key):
    return ["--key-file", key]


def restore(backup_dir, data_dir, key, *extra):
    return hearth("restore", "--from", str(backup_dir), "--data", data_dir, *key_args(key), *extra)


def snapshot(directory):
    """Every file's SHA-256 and every directory, the lock file's contents aside (whoever takes
    the lock, restore included, writes its pid there)."""
    found = {}
    for root, dirs, names in os.walk(directory):
        for name in dirs:
            found[os.path.relpath(os.path.join(root, name), directory) + "/"] = "directory"
        for name in names:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, directory)
            found[relative] = None if relative == "hearth.lock" else hashlib.sha256(open(path, "rb").read()).hexdigest()
    return found


def mdb_dump(directory, table):
    dump = subprocess.run(["mdb_dump", "-s", table, str(directory)], capture_output=True, text=True, check=True).stdout
    os.remove(os.path.join(directory, "lock.mdb"))
    header, body = dump.split("HEADER=END\n")
    lines = body.split("DATA=END")[0].split("\n")
    return header + "HEADER=END\n", dict(zip((k.strip() for k in lines[0::2]), (v.strip() for v in lines[1::2])))


def mdb_put(directory, table, key_hex, value_hex):
    """Writes one record with LMDB's own tools: the file stays well-formed, only its content lies."""
    header, _ = mdb_dump(directory, table)
    subprocess.run(["mdb_load", "-s", table, str(directory)], input=f"{header} {key_hex}\n {value_hex}\nDATA=END\n",
                   text=True, check=True)
    os.remove(os.path.join(directory, "lock.mdb"))


def rewrite_manifest(backup_dir, key=None):
    """Re-records every file's size and checksum; with `key`, the MAC too (only its holder can)."""
    manifest = json.loads((backup_dir / "hearth-backup.json").read_text())
    for entry in manifest["files"]:
        data = (backup_dir / entry["name"]).read_bytes()
        entry["bytes"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    body = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (backup_dir / "hearth-backup.json").write_bytes(body)
    if key:
        secret = open(key, "rb").read().rstrip(b"\r\n ")
        mac = hmac.new(secret, body, hashlib.sha256).hexdigest()
        (backup_dir / "hearth-backup.json.hmac").write_text(f"HMAC-SHA256 {mac}\n")
    return manifest


def backed_up_then_stopped(daemon, tmp_path):
    """Three accounts, a backup, two more accounts, the daemon stopped: the data directory is
    the good one a restore must not lose."""
    key = backup_key(tmp_path / "backup-key")
    session = requests.Session()
    kept = [sign_up(session, daemon.url).json()["localId"] for _ in range(3)]
    backup_dir = tmp_path / "backup"
    made = hearth("backup", "--data", daemon.data_dir, "--to", str(backup_dir), *key_args(key))
    assert made.returncode == 0, made.stdout + made.stderr
    later = [sign_up(session, daemon.url).json()["localId"] for _ in range(2)]
    daemon.stop()
    return key, backup_dir, kept, later


def uids_served(admin, uids):
    return {user.uid for user in auth.get_users([auth.UidIdentifier(uid) for uid in uids], app=admin).users}


def assert_still_the_good_directory(daemon, admin, before, uids):
    assert snapshot(daemon.data_dir) == before
    verify = hearth("audit", "verify", "--data", daemon.data_dir)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    daemon.start()
    assert uids_served(admin, uids) == set(uids)


def test_a_backup_that_does_not_verify_leaves_the_data_directory_untouched(daemon, admin, tmp_path):
    key, backup_dir, kept, later = backed_up_then_stopped(daemon, tmp_path)
    before = snapshot(daemon.data_dir)

    # Event 2 altered inside a well-formed data.mdb, its checksum and the MAC re-recorded (by
    # the key's holder, or a faulty disk before the backup was sealed): the chain breaks.
    chain = tmp_path / "bad-chain"
    shutil.copytree(backup_dir, chain)
    record = bytearray.fromhex(mdb_dump(chain, "ledger.events")[1][f"{2:016x}"])
    record[len(record) // 3] ^= 0x20
    mdb_put(chain, "ledger.events", f"{2:016x}", record.hex())
    rewrite_manifest(chain, key)
    refused = restore(chain, daemon.data_dir, key, "--replace")
    assert refused.returncode != 0 and "chain breaks at event 2" in refused.stderr, refused.stdout + refused.stderr
    assert snapshot(daemon.data_dir) == before

    # The chain intact, the projections holding a record no event explains.
    projections = tmp_path / "bad-projections"
    shutil.copytree(backup_dir, projections)
    mdb_put(projections, "projection.accounts", "7a7a7a", "00")
    rewrite_manifest(projections, key)
    refused = restore(projections, daemon.data_dir, key, "--replace")
    assert refused.returncode != 0 and "projections differ" in refused.stderr, refused.stdout + refused.stderr

    assert_still_the_good_directory(daemon, admin, before, kept + later)


def test_a_swapped_signing_key_is_refused_and_flagged_when_unauthenticated_is_allowed(daemon, admin, tmp_path):
    key, backup_dir, kept, later = backed_up_then_stopped(daemon, tmp_path)
    before = snapshot(daemon.data_dir)
    original = json.loads((backup_dir / "hearth-backup.json").read_text())
    original_kid = next(f["keyID"] for f in original["files"] if f["name"] == "signing-key-rs256.pem")

    # Someone with the backup but not the key: their own signing key, the checksum made to match.
    subprocess.run(["openssl", "genrsa", "-out", str(backup_dir / "signing-key-rs256.pem"), "2048"],
                   check=True, capture_output=True)
    rewrite_manifest(backup_dir)
    refused = restore(backup_dir, daemon.data_dir, key, "--replace")
    assert refused.returncode != 0 and "does not verify under the backup key" in refused.stderr, refused.stderr
    assert snapshot(daemon.data_dir) == before

    # Without the MAC file the backup is unauthenticated, and refused as such.
    os.remove(backup_dir / "hearth-backup.json.hmac")
    refused = restore(backup_dir, daemon.data_dir, key, "--replace")
    assert refused.returncode != 0 and "carries no MAC" in refused.stderr, refused.stderr
    # Allowed explicitly, the manifest's kid still gives the swapped key away...
    refused = restore(backup_dir, daemon.data_dir, key, "--replace", "--allow-unauthenticated")
    assert refused.returncode != 0 and f"its manifest records key {original_kid}" in refused.stderr, refused.stderr
    assert snapshot(daemon.data_dir) == before

    # ...and with that edited too, it restores, saying loudly that it is not authenticated and
    # that tokens the daemon signed stop verifying.
    manifest = json.loads((backup_dir / "hearth-backup.json").read_text())
    for entry in manifest["files"]:
        entry.pop("keyID", None)
    (backup_dir / "hearth-backup.json").write_text(json.dumps(manifest))
    allowed = restore(backup_dir, daemon.data_dir, key, "--replace", "--allow-unauthenticated")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "NOT AUTHENTICATED" in allowed.stdout
    assert f"signing-key-rs256.pem changes from key {original_kid} to key " in allowed.stderr, allowed.stderr


def test_a_backup_restores_only_under_its_own_key(daemon, admin, tmp_path):
    key, backup_dir, kept, later = backed_up_then_stopped(daemon, tmp_path)
    before = snapshot(daemon.data_dir)
    named = json.loads((backup_dir / "hearth-backup.json").read_text())["backupKeyID"]

    other = backup_key(tmp_path / "other-key")
    refused = restore(backup_dir, daemon.data_dir, other, "--replace")
    assert refused.returncode != 0 and "does not verify under the backup key" in refused.stderr, refused.stderr
    assert f"the manifest names key {named}" in refused.stderr
    # No key at all: refused, naming the way to give one.
    bare = hearth("restore", "--from", str(backup_dir), "--data", daemon.data_dir, "--replace")
    assert bare.returncode != 0 and "no backup key" in bare.stderr, bare.stderr
    # A backup without a key is made only when asked for.
    unkeyed = hearth("backup", "--data", daemon.data_dir, "--to", str(tmp_path / "unkeyed"))
    assert unkeyed.returncode != 0 and "no backup key" in unkeyed.stderr, unkeyed.stderr
    assert_still_the_good_directory(daemon, admin, before, kept + later)


def test_restore_swaps_in_the_backup_and_keeps_the_replaced_directory(daemon, admin, tmp_path):
    key, backup_dir, kept, later = backed_up_then_stopped(daemon, tmp_path)
    before = snapshot(daemon.data_dir)

    env = dict(os.environ, HEARTH_BACKUP_KEY_FILE=key)  # as a systemd credential would name it
    restored = subprocess.run([BINARY, "restore", "--from", str(backup_dir), "--data", daemon.data_dir, "--replace"],
                              capture_output=True, text=True, timeout=300, env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "HMAC-SHA256 under backup key" in restored.stdout
    previous = next(line.split()[1] for line in restored.stdout.splitlines() if line.startswith("previous:"))
    assert os.path.dirname(previous) == daemon.data_dir and os.path.basename(previous).startswith("previous-")
    # The replaced ledger and keys, byte for byte, and nothing of the swap left behind.
    name = os.path.basename(previous)
    assert {path[len(name) + 1:]: digest for path, digest in snapshot(daemon.data_dir).items()
            if path.startswith(name + "/") and path != name + "/"} == {path: digest for path, digest in before.items()
                                                if path not in ("hearth.lock", "lock.mdb")}
    # The secrets key too: made at the first sign-in (refresh tokens' tags).
    assert sorted(os.listdir(daemon.data_dir)) == sorted(
        ["data.mdb", "hearth.lock", "ledger-key", name, "secrets-key", "signing-key-rs256.pem"])

    verify = hearth("audit", "verify", "--data", daemon.data_dir)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    daemon.start()
    assert uids_served(admin, kept + later) == set(kept)
