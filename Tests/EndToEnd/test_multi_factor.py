"""TOTP second factors through the real daemon: enrolment and sign-in over the REST calls the
Firebase SDKs make, the firebase-admin SDK reading the user (its raw record's mfaInfo: the
Python SDK has no multi-factor fields of its own) and verifying the second factor's claims,
the audit replay showing enrolment and use, and the secret nowhere but sealed."""

import base64
import hashlib
import hmac
import json
import os
import struct
import subprocess
import tempfile
import time

import firebase_admin
import requests
from firebase_admin import auth

from conftest import BINARY, PROJECT, Daemon, free_port

KEY = {"key": "e2e-key"}
OWNER = {"Authorization": "Bearer owner"}


def totp(secret, at, digits=6, period=30):
    """RFC 6238 with HMAC-SHA1, as an authenticator app computes it."""
    mac = hmac.new(secret, struct.pack(">Q", int(at) // period), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10**digits).zfill(digits)


def test_rfc6238_vectors():
    secret = b"12345678901234567890"
    assert totp(secret, 59, digits=8) == "94287082"
    assert totp(secret, 1111111109, digits=8) == "07081804"
    assert totp(secret, 2000000000, digits=8) == "69279037"


def post(url, path, body, headers=None):
    return requests.post(f"{url}/identitytoolkit.googleapis.com/{path}", params=KEY, json=body, headers=headers, timeout=10)


def test_enrol_sign_in_with_the_second_factor_and_withdraw():
    with tempfile.TemporaryDirectory(prefix="hearth-e2e-") as root:
        data_dir = os.path.join(root, "data")
        os.makedirs(data_dir)
        daemon = Daemon(data_dir, free_port(), env={"HEARTH_LOG_LEVEL": "info"})
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"127.0.0.1:{daemon.port}"
        daemon.start()
        admin = firebase_admin.initialize_app(options={"projectId": PROJECT}, name=f"mfa-{daemon.port}")
        try:
            run(daemon, admin)
        finally:
            firebase_admin.delete_app(admin)
            daemon.stop()


def run(daemon, admin):
    url = daemon.url
    config = requests.patch(
        f"{url}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/config", params={"updateMask": "mfa"},
        json={"mfa": {"state": "ENABLED", "providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": 1}}]}},
        headers=OWNER, timeout=10)
    assert config.status_code == 200, config.text
    user = auth.create_user(email="second@factor.example", password="correct-horse-42", email_verified=True, app=admin)
    password = {"email": "second@factor.example", "password": "correct-horse-42", "returnSecureToken": True}
    signed_in = post(url, "v1/accounts:signInWithPassword", password).json()

    started = post(url, "v2/accounts/mfaEnrollment:start", {"idToken": signed_in["idToken"], "totpEnrollmentInfo": {}})
    assert started.status_code == 200, started.text
    info = started.json()["totpSessionInfo"]
    assert (info["verificationCodeLength"], info["hashingAlgorithm"], info["periodSec"]) == (6, "SHA1", 30)
    shared = info["sharedSecretKey"]
    secret = base64.b32decode(shared + "=" * (-len(shared) % 8))
    now = time.time()
    finalized = post(url, "v2/accounts/mfaEnrollment:finalize", {
        "idToken": signed_in["idToken"], "displayName": "Authenticator",
        "totpVerificationInfo": {"sessionInfo": info["sessionInfo"], "verificationCode": totp(secret, now)}})
    assert finalized.status_code == 200, finalized.text
    enrolled = auth.verify_id_token(finalized.json()["idToken"], app=admin)
    assert enrolled["firebase"]["sign_in_second_factor"] == "totp"
    enrollment_id = enrolled["firebase"]["second_factor_identifier"]

    # The Admin SDK reads the user; its record carries the factor as Firebase lists it.
    record = auth.get_user(user.uid, app=admin)
    factors = record._data["mfaInfo"]
    assert [(f["mfaEnrollmentId"], f["displayName"], f["totpInfo"]) for f in factors] == [(enrollment_id, "Authenticator", {})]
    assert factors[0]["enrolledAt"].endswith("Z")
    listed = {u.uid: u for u in auth.list_users(app=admin).iterate_all()}
    assert listed[user.uid]._data["mfaInfo"][0]["mfaEnrollmentId"] == enrollment_id

    # The first factor alone gets no tokens; the next time step's code completes it.
    first = post(url, "v1/accounts:signInWithPassword", password).json()
    assert "idToken" not in first and first["mfaInfo"][0]["mfaEnrollmentId"] == enrollment_id
    finish = {"mfaPendingCredential": first["mfaPendingCredential"], "mfaEnrollmentId": enrollment_id}
    replayed = post(url, "v2/accounts/mfaSignIn:finalize", dict(finish, totpVerificationInfo={"verificationCode": totp(secret, now)}))
    assert replayed.json()["error"]["message"] == "INVALID_CODE"
    done = post(url, "v2/accounts/mfaSignIn:finalize", dict(finish, totpVerificationInfo={"verificationCode": totp(secret, now + 30)}))
    assert done.status_code == 200, done.text
    claims = auth.verify_id_token(done.json()["idToken"], app=admin, check_revoked=True)
    assert claims["firebase"]["sign_in_provider"] == "password"
    assert (claims["firebase"]["sign_in_second_factor"], claims["firebase"]["second_factor_identifier"]) == ("totp", enrollment_id)

    withdrawn = post(url, "v2/accounts/mfaEnrollment:withdraw", {"idToken": done.json()["idToken"], "mfaEnrollmentId": enrollment_id})
    assert withdrawn.status_code == 200, withdrawn.text
    assert "mfaInfo" not in auth.get_user(user.uid, app=admin)._data
    assert "idToken" in post(url, "v1/accounts:signInWithPassword", password).json()

    # The audit shows enrolment, use and withdrawal; the secret is nowhere in the clear.
    replay = subprocess.run([BINARY, "audit", "replay", "--data", daemon.data_dir, "--project", PROJECT, "--uid", user.uid],
                            capture_output=True, text=True, timeout=120)
    assert replay.returncode == 0, replay.stderr
    types = [json.loads(line)["type"] for line in replay.stdout.splitlines()]
    assert [t for t in types if t.startswith("account.mfa")] == ["account.mfa_enrolled", "account.mfa_code_used", "account.mfa_withdrawn"]
    with open(os.path.join(daemon.data_dir, "data.mdb"), "rb") as ledger, open(daemon.log_path, "rb") as log:
        for text in (replay.stdout.encode(), ledger.read(), log.read()):
            assert secret not in text and shared.encode() not in text


def hearth(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def test_a_firebase_export_with_phone_factors_keeps_them_and_blocks_the_first_factor_alone(daemon, admin, tmp_path):
    users = [
        {"localId": "fb-sms", "email": "sms@factor.example", "emailVerified": True, "createdAt": "1700000000000",
         "disabled": False, "providerUserInfo": [],
         "mfaInfo": [{"mfaEnrollmentId": "fb-phone-1", "displayName": "Work phone", "phoneInfo": "+15550100",
                      "enrolledAt": "2024-05-01T10:00:00.000Z"}]},
        {"localId": "fb-plain", "email": "plain@factor.example", "emailVerified": True, "createdAt": "1700000000001",
         "disabled": False, "providerUserInfo": []},
    ]
    path = tmp_path / "firebase-users.json"
    path.write_text('{"users": [\n' + ",\n".join(json.dumps(u, indent=2) for u in users) + "]}")
    done = hearth("users", "import", str(path), "--project", PROJECT, "--daemon", f"127.0.0.1:{daemon.port}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "imported 2 of 2 users" in done.stdout and "second factors: kept for 1 users" in done.stdout
    assert "MFA_REENROLLMENT_REQUIRED" in done.stderr

    factors = auth.get_user("fb-sms", app=admin)._data["mfaInfo"]
    assert factors == [{"mfaEnrollmentId": "fb-phone-1", "displayName": "Work phone", "phoneInfo": "+15550100",
                        "enrolledAt": "2024-05-01T10:00:00.000Z"}]
    # A password set by the administrator after the import; the sign-in still needs the factor.
    auth.update_user("fb-sms", password="correct-horse-42", app=admin)
    password = {"email": "sms@factor.example", "password": "correct-horse-42", "returnSecureToken": True}
    refused = post(daemon.url, "v1/accounts:signInWithPassword", password)
    assert refused.status_code == 400 and refused.json()["error"]["message"].startswith("MFA_REENROLLMENT_REQUIRED"), refused.text
    # The documented path: an administrator resets the factors, then the user signs in (and enrols).
    reset = post(daemon.url, f"v1/projects/{PROJECT}/accounts:update", {"localId": "fb-sms", "mfa": {}}, headers=OWNER)
    assert reset.status_code == 200, reset.text
    assert "idToken" in post(daemon.url, "v1/accounts:signInWithPassword", password).json()


def test_a_hearth_export_with_totp_secrets_keeps_the_factor_working_elsewhere(daemon, admin, tmp_path):
    requests.patch(
        f"{daemon.url}/identitytoolkit.googleapis.com/v2/projects/{PROJECT}/config", params={"updateMask": "mfa"},
        json={"mfa": {"state": "ENABLED", "providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": 1}}]}},
        headers=OWNER, timeout=10).raise_for_status()
    auth.create_user(uid="mover", email="mover@factor.example", password="correct-horse-42", email_verified=True, app=admin)
    password = {"email": "mover@factor.example", "password": "correct-horse-42", "returnSecureToken": True}
    token = post(daemon.url, "v1/accounts:signInWithPassword", password).json()["idToken"]
    info = post(daemon.url, "v2/accounts/mfaEnrollment:start", {"idToken": token, "totpEnrollmentInfo": {}}).json()["totpSessionInfo"]
    secret = base64.b32decode(info["sharedSecretKey"] + "=" * (-len(info["sharedSecretKey"]) % 8))
    now = time.time()
    enrolled = post(daemon.url, "v2/accounts/mfaEnrollment:finalize", {
        "idToken": token, "totpVerificationInfo": {"sessionInfo": info["sessionInfo"], "verificationCode": totp(secret, now)}})
    assert enrolled.status_code == 200, enrolled.text

    plain, with_secrets = tmp_path / "plain.json", tmp_path / "secrets.json"
    assert hearth("users", "export", "--data", daemon.data_dir, "--project", PROJECT, str(plain)).returncode == 0
    made = hearth("users", "export", "--data", daemon.data_dir, "--project", PROJECT, "--include-totp-secrets", str(with_secrets))
    assert made.returncode == 0 and "TOTP secrets written: 1" in made.stdout, made.stdout + made.stderr
    assert info["sharedSecretKey"] not in plain.read_text()
    assert json.loads(plain.read_text())["users"][0]["mfaInfo"][0]["totpInfo"] == {}

    for file, works in ((with_secrets, True), (plain, False)):
        root = tmp_path / f"fresh-{works}"
        root.mkdir()
        fresh = Daemon(str(root), free_port())
        fresh.start()
        try:
            moved = hearth("users", "import", str(file), "--project", PROJECT, "--daemon", f"127.0.0.1:{fresh.port}")
            assert moved.returncode == 0, moved.stdout + moved.stderr
            first = post(fresh.url, "v1/accounts:signInWithPassword", password)
            if not works:
                assert first.json()["error"]["message"].startswith("MFA_REENROLLMENT_REQUIRED"), first.text
                continue
            pending = first.json()
            assert "idToken" not in pending
            finish = {"mfaPendingCredential": pending["mfaPendingCredential"], "mfaEnrollmentId": pending["mfaInfo"][0]["mfaEnrollmentId"]}
            # The step used at enrolment stays spent after the move; the next one signs in.
            replayed = post(fresh.url, "v2/accounts/mfaSignIn:finalize", dict(finish, totpVerificationInfo={"verificationCode": totp(secret, now)}))
            assert replayed.json()["error"]["message"] == "INVALID_CODE"
            signed_in = post(fresh.url, "v2/accounts/mfaSignIn:finalize",
                             dict(finish, totpVerificationInfo={"verificationCode": totp(secret, now + 30)}))
            assert signed_in.status_code == 200, signed_in.text
        finally:
            fresh.stop()
