"""hearth users export / import: firebase auth:export's JSON in and out. A Firebase project's
file imports with auth:import's flags and its users sign in with their old passwords; a
Hearth export carries its hash parameters, and a round trip into a fresh production daemon
keeps every account byte for byte."""

import base64
import hashlib
import json
import os
import re
import subprocess

import pytest
import requests
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from firebase_admin import auth

from conftest import BINARY, PROJECT, Daemon, free_port

KEY = {"key": "e2e-key"}
FIREBASE_USER_KEYS = {
    "localId", "email", "emailVerified", "passwordHash", "salt", "displayName", "photoUrl", "createdAt",
    "lastSignedInAt", "providerUserInfo", "phoneNumber", "disabled", "customAttributes", "mfaInfo",
}
SIGNER_KEY = os.urandom(64)
SEPARATOR = b"\x07"


def firebase_scrypt(password, salt, rounds=8, mem_cost=14):
    derived = hashlib.scrypt(password.encode(), salt=salt + SEPARATOR, n=2**mem_cost, r=rounds, p=1, dklen=32, maxmem=2**26)
    encryptor = Cipher(algorithms.AES(derived), modes.CTR(b"\0" * 16)).encryptor()
    return encryptor.update(SIGNER_KEY) + encryptor.finalize()


def hearth(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=600)


def sign_in(url, email, password, key=KEY):
    return requests.post(f"{url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword", params=key,
                         json={"email": email, "password": password, "returnSecureToken": True}, timeout=60)


def scrypt_flags():
    return ["--hash-algo", "scrypt", "--hash-key", base64.b64encode(SIGNER_KEY).decode(),
            "--salt-separator", base64.b64encode(SEPARATOR).decode(), "--rounds", "8", "--mem-cost", "14"]


def firebase_file(path, users):
    """As firebase auth:export writes it: {"users": [ with each user indented by JSON.stringify(u, null, 2)."""
    path.write_text('{"users": [\n' + ",\n".join(json.dumps(u, indent=2) for u in users) + "]}")


def test_a_firebase_export_imports_with_auth_import_flags(daemon, admin, tmp_path):
    salt = os.urandom(16)
    users = [
        {"localId": "fb-ada", "email": "ada@example.com", "emailVerified": True,
         "passwordHash": base64.b64encode(firebase_scrypt("ada-old-pw", salt)).decode(),
         "salt": base64.b64encode(salt).decode(), "displayName": "Ada", "lastSignedInAt": "1700000100000",
         "createdAt": "1700000000000", "disabled": False, "customAttributes": "{\"role\":\"admin\"}",
         "providerUserInfo": [{"providerId": "google.com", "rawId": "g-ada", "email": "ada@gmail.com", "displayName": "Ada G"}]},
        {"localId": "fb-bob", "email": "bob@example.com", "emailVerified": False, "createdAt": "1700000000001",
         "disabled": True, "providerUserInfo": []},
    ]
    path = tmp_path / "firebase-users.json"
    firebase_file(path, users)
    target = ["--project", PROJECT, "--daemon", f"127.0.0.1:{daemon.port}"]

    # Hashes without their parameters, or a key auth:import does not know: nothing is imported.
    missing = hearth("users", "import", str(path), *target)
    assert missing.returncode != 0 and "--hash-algo" in missing.stderr, missing.stderr
    bad_rounds = hearth("users", "import", str(path), *target, *scrypt_flags()[:-4], "--rounds", "9", "--mem-cost", "14")
    assert bad_rounds.returncode != 0 and "Must provide valid rounds(1..8)" in bad_rounds.stderr, bad_rounds.stderr
    stray = tmp_path / "stray.json"
    firebase_file(stray, [users[1], dict(users[1], localId="fb-cy", lastLoginAt="1700000000000")])
    refused = hearth("users", "import", str(stray), *target)
    assert refused.returncode != 0 and "has unsupported keys: lastLoginAt" in refused.stderr, refused.stderr
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user("fb-bob", app=admin)

    imported = hearth("users", "import", str(path), *target, *scrypt_flags())
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert "imported 2 of 2 users" in imported.stdout

    ada = auth.get_user("fb-ada", app=admin)
    assert (ada.email, ada.email_verified, ada.display_name, ada.custom_claims) == ("ada@example.com", True, "Ada", {"role": "admin"})
    assert ada.user_metadata.creation_timestamp == 1700000000000
    assert ada.user_metadata.last_sign_in_timestamp == 1700000100000
    assert [(p.provider_id, p.uid, p.email) for p in ada.provider_data if p.provider_id == "google.com"] == [
        ("google.com", "g-ada", "ada@gmail.com")]
    assert auth.get_user("fb-bob", app=admin).disabled
    assert sign_in(daemon.url, "ada@example.com", "wrong-pw").status_code == 400
    assert sign_in(daemon.url, "ada@example.com", "ada-old-pw").status_code == 200

    again = hearth("users", "import", str(path), *target, *scrypt_flags())
    assert again.returncode == 2 and "refused fb-ada" in again.stderr, again.stdout + again.stderr


def test_a_round_trip_into_a_fresh_production_daemon_keeps_every_account(daemon, admin, tmp_path):
    passwords = {}
    for index in range(5):
        email = f"native{index}@example.com"
        passwords[email] = f"native-pw-{index}"
        reply = requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params=KEY,
                              json={"email": email, "password": passwords[email]}, timeout=30)
        assert reply.status_code == 200, reply.text
    first = auth.get_user_by_email("native0@example.com", app=admin)
    auth.update_user(first.uid, display_name="Native Zero", photo_url="https://img.example/0.png", disabled=True, app=admin)
    auth.set_custom_user_claims(first.uid, {"tier": 2}, app=admin)
    # Imported from Firebase, never signed in since: its hash keeps Firebase's parameters.
    salt = os.urandom(16)
    result = auth.import_users([
        auth.ImportUserRecord("from-firebase", email="old@example.com", password_hash=firebase_scrypt("old-pw", salt),
                              password_salt=salt),
        auth.ImportUserRecord("federated", email="fed@example.com", display_name="Fed",
                              provider_data=[auth.UserProvider(uid="gh-7", provider_id="github.com", email="fed@github.example")]),
    ], hash_alg=auth.UserImportHash.scrypt(key=SIGNER_KEY, rounds=8, memory_cost=14, salt_separator=SEPARATOR), app=admin)
    assert result.success_count == 2, [e.reason for e in result.errors]
    passwords["old@example.com"] = "old-pw"
    requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params=KEY, json={}, timeout=30)

    exported = tmp_path / "hearth-users.json"
    made = hearth("users", "export", "--data", daemon.data_dir, "--project", PROJECT, str(exported))
    assert made.returncode == 0, made.stderr
    assert "exported 8 users" in made.stdout
    assert oct(exported.stat().st_mode & 0o777) == "0o600"
    document = json.loads(exported.read_text())
    assert list(document) == ["hashConfig", "otherHashConfigs", "users"]
    assert document["hashConfig"] == {"hashAlgo": "STANDARD_SCRYPT", "memCost": 4096, "blockSize": 8, "parallelization": 1, "dkLen": 32}
    assert document["otherHashConfigs"] == [{
        "hashConfig": {"hashAlgo": "SCRYPT", "hashKey": base64.b64encode(SIGNER_KEY).decode(),
                       "saltSeparator": base64.b64encode(SEPARATOR).decode(), "rounds": 8, "memCost": 14},
        "localIds": ["from-firebase"]}]
    for user in document["users"]:
        assert set(user) <= FIREBASE_USER_KEYS, user
        assert isinstance(user["createdAt"], str)
        if "passwordHash" in user:
            base64.b64decode(user["passwordHash"], validate=True)

    root = tmp_path / "fresh"
    root.mkdir()
    token = "transfer-admin-token-0123456789abcdef"
    fresh = Daemon(str(root), free_port(), env={
        "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": json.dumps({"transfer-key": PROJECT}),
        "HEARTH_ADMIN_TOKENS": token})
    fresh.start()
    try:
        moved = hearth("users", "import", str(exported), "--project", PROJECT, "--daemon", f"127.0.0.1:{fresh.port}",
                       "--token", token)
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert "imported 8 of 8 users" in moved.stdout
        back = tmp_path / "back.json"
        assert hearth("users", "export", "--data", str(root), "--project", PROJECT, str(back)).returncode == 0
        assert back.read_text() == exported.read_text()
        for email, password in passwords.items():
            reply = sign_in(fresh.url, email, password, key={"key": "transfer-key"})
            if email == "native0@example.com":
                assert reply.json()["error"]["message"] == "USER_DISABLED"
            else:
                assert reply.status_code == 200, (email, reply.text)
            assert sign_in(fresh.url, email, password + "x", key={"key": "transfer-key"}).status_code == 400
    finally:
        fresh.stop()


def test_large_users_go_in_batches_under_the_request_limit(daemon, admin, tmp_path):
    """1,000 users of 1.2 KB would pass the daemon's 1 MiB body limit: the tool sends smaller batches."""
    padding = "x" * 980
    users = [{"localId": f"big-{index:04d}", "email": f"big{index}@example.com", "createdAt": "1700000000000",
              "photoUrl": f"https://img.example/{index}.png", "customAttributes": json.dumps({"pad": padding})}
             for index in range(1100)]
    path = tmp_path / "big.json"
    firebase_file(path, users)
    imported = hearth("users", "import", str(path), "--project", PROJECT, "--daemon", f"127.0.0.1:{daemon.port}")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert re.search(r"imported 1,100 of 1,100 users into \S+ in ([2-9]|\d\d+) batches", imported.stdout), imported.stdout
    assert auth.get_user("big-1099", app=admin).custom_claims == {"pad": padding}
