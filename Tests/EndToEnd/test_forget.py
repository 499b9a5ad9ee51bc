"""Forgetting through the real daemon and the firebase-admin SDK: a deleted or erased user's
personal data is gone from the audit replay, from every ledger record, and from a backup taken
afterwards, while the chain verifies and the other users are untouched."""

import hashlib
import json
import os
import subprocess

import requests
from firebase_admin import auth

from conftest import BINARY, PROJECT

KEY = {"key": "e2e-key"}


def hearth(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def person(tag):
    return {
        "email": f"{tag}-mailbox@forget.example",
        "display_name": f"Zelda {tag.title()} Quark",
        "photo_url": f"https://img.forget.example/{tag}.png",
        "phone_number": "+1555" + "".join(str(ord(c) % 10) for c in tag[:3]) + "0199",
    }


def secrets(fields):
    return [fields["email"], fields["display_name"], fields["photo_url"], fields["phone_number"]]


def live_user(admin, tag, url):
    fields = person(tag)
    user = auth.create_user(password="correct-horse-42", **fields, app=admin)
    auth.update_user(user.uid, display_name=fields["display_name"] + " Jr", app=admin)
    auth.set_custom_user_claims(user.uid, {"squad": tag}, app=admin)
    signed_in = requests.post(
        f"{url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword", params=KEY,
        json={"email": fields["email"], "password": "correct-horse-42", "returnSecureToken": True}, timeout=10)
    assert signed_in.status_code == 200, signed_in.text
    return user.uid, secrets(fields) + [fields["display_name"] + " Jr", f'"squad": "{tag}"', f'"squad":"{tag}"']


def replay(daemon, uid):
    done = hearth("audit", "replay", "--data", daemon.data_dir, "--project", PROJECT, "--uid", uid)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_deleted_and_erased_users_are_forgotten_and_the_chain_still_verifies(daemon, admin, tmp_path):
    deleted, deleted_secrets = live_user(admin, "deleted", daemon.url)
    erased, erased_secrets = live_user(admin, "erased", daemon.url)
    kept, kept_secrets = live_user(admin, "kept", daemon.url)
    kept_before = auth.get_user(kept, app=admin)
    kept_history = replay(daemon, kept)
    assert any(kept_secrets[0] in json.dumps(event) for event in kept_history)

    auth.delete_user(deleted, app=admin)
    done = hearth("users", "erase", "--daemon", f"127.0.0.1:{daemon.port}", "--project", PROJECT, "--uid", erased,
                  "--reason", "subject request 2026-0042")
    assert done.returncode == 0, done.stderr
    assert f"erased {erased}" in done.stdout

    for uid, personal in ((deleted, deleted_secrets), (erased, erased_secrets)):
        history = replay(daemon, uid)
        assert history[0]["type"] == "account.created" and "erased" in history[0]
        assert "email" not in history[0]["payload"] and history[0]["payload"]["method"] == "admin"
        text = json.dumps(history)
        for secret in personal:
            assert secret not in text, secret
        # The text form names the erased fields too, and shows none of them.
        lines = hearth("audit", "replay", "--data", daemon.data_dir, "--project", PROJECT, "--uid", uid, "--format", "text")
        assert lines.returncode == 0, lines.stderr
        created = lines.stdout.splitlines()[0]
        assert "account.created" in created and "  erased: " in created and "email" in created.split("erased: ")[1], created
        for secret in personal:
            assert secret not in lines.stdout, secret
    assert replay(daemon, deleted)[-1]["type"] == "account.deleted"
    # The account as it was before: its shape, its personal fields named as erased.
    before = str(replay(daemon, deleted)[-2]["recordedAtMs"])
    shown = hearth("audit", "show", "--data", daemon.data_dir, "--project", PROJECT, "--uid", deleted, "--at", before)
    assert shown.returncode == 0, shown.stderr
    snapshot = json.loads(shown.stdout)
    assert "email" in snapshot["erased"] and "email" not in snapshot["account"] and "password" not in snapshot["account"]
    assert snapshot["account"]["uid"] == deleted and all(secret not in shown.stdout for secret in deleted_secrets)
    last = replay(daemon, erased)[-1]
    assert last["type"] == "account.erased" and last["payload"] == {"reason": "subject request 2026-0042"}
    assert last["metadata"]["actor"] == "admin" and "clientIp" not in last["metadata"]

    # The other user is untouched, and so is its history.
    assert auth.get_user(kept, app=admin).__dict__ == kept_before.__dict__
    assert replay(daemon, kept) == kept_history

    verify = hearth("audit", "verify", "--data", daemon.data_dir)
    assert verify.returncode == 0 and verify.stdout.startswith("ledger intact"), verify.stdout + verify.stderr

    # A subject-access export: the living user's account and history, opened; the deleted one's
    # history with its shape and nothing else.
    for uid in (kept, deleted):
        done = hearth("users", "export", "--data", daemon.data_dir, "--project", PROJECT, "--uid", uid, "--history",
                      str(tmp_path / f"{uid}.json"))
        assert done.returncode == 0, done.stderr
    access = json.loads((tmp_path / f"{kept}.json").read_text())
    assert access["localId"] == kept and access["user"]["email"] == kept_secrets[0]
    assert access["events"] == kept_history and (tmp_path / f"{kept}.json").stat().st_mode & 0o077 == 0
    gone = json.loads((tmp_path / f"{deleted}.json").read_text())
    assert gone["user"] is None and gone["events"][-1]["type"] == "account.deleted"
    assert all(secret not in json.dumps(gone) for secret in deleted_secrets)
    unknown = hearth("users", "export", "--data", daemon.data_dir, "--uid", "nobody", "--history", str(tmp_path / "x.json"))
    assert unknown.returncode != 0 and "no account nobody" in unknown.stderr
    # To standard output with -, the summary on standard error; a link is not written over.
    piped = hearth("users", "export", "--data", daemon.data_dir, "--project", PROJECT, "--uid", kept, "--history", "-")
    assert piped.returncode == 0 and json.loads(piped.stdout) == access and f"exported {kept}" in piped.stderr, piped.stderr
    (tmp_path / "link.json").symlink_to(tmp_path / f"{kept}.json")
    linked = hearth("users", "export", "--data", daemon.data_dir, "--project", PROJECT, "--uid", kept, "--history",
                    str(tmp_path / "link.json"))
    assert linked.returncode != 0 and "not a regular file" in linked.stderr and (tmp_path / "link.json").is_symlink()

    # A backup taken now (compacted: the live pages only) holds nothing of either user.
    backup = tmp_path / "backup"
    done = hearth("backup", "--data", daemon.data_dir, "--to", str(backup), "--unauthenticated")
    assert done.returncode == 0, done.stderr
    copy = (backup / "data.mdb").read_bytes()
    for secret in deleted_secrets + erased_secrets:
        assert secret.encode() not in copy, secret
    assert kept_secrets[0].encode() in copy  # the projections hold the live user's email

    # The data directory itself, once compacted (what hearth-compact.timer does daily): no file
    # in it holds a byte of either user; the daemon then serves the other one as before.
    daemon.stop()
    done = hearth("compact", "--data", daemon.data_dir)
    assert done.returncode == 0 and done.stdout.startswith("compacted"), done.stdout + done.stderr
    for name in os.listdir(daemon.data_dir):
        path = os.path.join(daemon.data_dir, name)
        if os.path.isfile(path):
            content = open(path, "rb").read()
            for secret in deleted_secrets + erased_secrets:
                assert secret.encode() not in content, (name, secret)
    daemon.start()
    assert auth.get_user(kept, app=admin).email == kept_secrets[0]


def test_backup_retention_bounds_how_long_erased_data_lives_in_backups(daemon, admin, tmp_path):
    uid, personal = live_user(admin, "retained", daemon.url)
    backups = tmp_path / "backups"
    backups.mkdir()
    for name in ("old", "recent"):
        done = hearth("backup", "--data", daemon.data_dir, "--to", str(backups / name), "--unauthenticated")
        assert done.returncode == 0, done.stderr
    assert personal[0].encode() in (backups / "old" / "data.mdb").read_bytes()
    manifest = json.loads((backups / "old" / "hearth-backup.json").read_text())
    manifest["createdAt"] -= 40 * 86_400_000
    (backups / "old" / "hearth-backup.json").write_text(json.dumps(manifest))
    (backups / "notes").mkdir()
    (backups / "notes" / "readme.txt").write_text("not a backup")

    auth.delete_user(uid, app=admin)
    done = hearth("backup", "--data", daemon.data_dir, "--to", str(backups / "today"), "--unauthenticated",
                  "--retain-days", "30")
    assert done.returncode == 0, done.stderr
    assert "backups deleted: 1" in done.stdout and str(backups / "old") in done.stdout
    assert sorted(p.name for p in backups.iterdir()) == ["notes", "recent", "today"]
    assert personal[0].encode() not in (backups / "today" / "data.mdb").read_bytes()
    refused = hearth("backup", "--data", daemon.data_dir, "--to", str(backups / "x"), "--unauthenticated", "--retain-days", "0")
    assert refused.returncode != 0 and "--retain-days" in refused.stderr


def test_a_restore_refuses_a_ledger_key_that_does_not_open_the_accounts_keys(daemon, admin, tmp_path):
    live_user(admin, "restored", daemon.url)
    backup = tmp_path / "backup"
    assert hearth("backup", "--data", daemon.data_dir, "--to", str(backup), "--unauthenticated").returncode == 0
    # Another ledger key, its checksum rewritten to match (an unauthenticated backup can be).
    other = os.urandom(32)
    (backup / "ledger-key").write_bytes(other)
    manifest = json.loads((backup / "hearth-backup.json").read_text())
    for entry in manifest["files"]:
        if entry["name"] == "ledger-key":
            entry["sha256"] = hashlib.sha256(other).hexdigest()
    (backup / "hearth-backup.json").write_text(json.dumps(manifest))
    target = tmp_path / "target"
    done = hearth("restore", "--from", str(backup), "--data", str(target), "--allow-unauthenticated")
    assert done.returncode != 0 and "ledger-key does not open" in done.stderr, done.stdout + done.stderr
    assert not (target / "data.mdb").exists()
