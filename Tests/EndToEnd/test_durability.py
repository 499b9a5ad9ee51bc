"""The real firebase-admin SDK against the real binary: every account and token state
survives a restart, and a SIGKILL under load loses no acknowledged sign-up."""

import base64
import contextlib
import json
import subprocess
import threading
import time

import pytest
import requests
from firebase_admin import auth

from conftest import BINARY
from waiting import eventually

KEY = {"key": "e2e-key"}
PASSWORD = "correct-horse-42"


def client(daemon, method, body):
    resp = requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:{method}", params=KEY, json=body, timeout=30)
    return resp


def refresh(daemon, token):
    return requests.post(
        f"{daemon.url}/securetoken.googleapis.com/v1/token",
        params=KEY, data={"grant_type": "refresh_token", "refresh_token": token}, timeout=30,
    )


def issued_at_of(id_token):
    """An ID token's `iat`, in seconds."""
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["iat"]


def snapshot(admin):
    users = {}
    for user in auth.list_users(app=admin).iterate_all():
        users[user.uid] = (
            user.email, user.email_verified, user.display_name, user.disabled, user.custom_claims,
            user.tokens_valid_after_timestamp, user.password_hash, user.password_salt,
            sorted((p.provider_id, p.uid) for p in user.provider_data),
            user.user_metadata.creation_timestamp, user.user_metadata.last_sign_in_timestamp,
            user.user_metadata.last_refresh_timestamp,
        )
        # The SDK parses lastRefreshAt (RFC 3339) itself: it must agree with the last sign-in.
        assert user.user_metadata.last_refresh_timestamp == user.user_metadata.last_sign_in_timestamp
    return users


def test_state_survives_restart(daemon, admin):
    auth.create_user(uid="ada", email="ada@example.com", password=PASSWORD, display_name="Ada", app=admin)
    auth.set_custom_user_claims("ada", {"role": "editor"}, app=admin)
    auth.create_user(uid="off", email="off@example.com", password=PASSWORD, app=admin)
    auth.update_user("off", disabled=True, app=admin)
    signed_in = client(daemon, "signInWithPassword", {"email": "ada@example.com", "password": PASSWORD}).json()
    anonymous = client(daemon, "signUp", {}).json()
    revoked = client(daemon, "signUp", {"email": "rev@example.com", "password": PASSWORD}).json()
    # Revocation is in whole seconds (validSince): revoke in a second after the one its tokens were issued in.
    issued_at = issued_at_of(revoked["idToken"])
    eventually(lambda: time.time() >= issued_at + 1, timeout=5, interval=0.01,
               message=f"the clock to pass the second the revoked session began in ({issued_at})")
    auth.revoke_refresh_tokens(revoked["localId"], app=admin)
    auth.import_users(
        [auth.ImportUserRecord(uid="g", email="g@example.com", provider_data=[auth.UserProvider(uid="g-1", provider_id="google.com")])],
        app=admin,
    )

    before = snapshot(admin)
    assert len(before) == 5
    daemon.restart()
    assert snapshot(admin) == before

    # Sessions: live ones refresh, revoked ones do not, and the disabled user stays out.
    assert refresh(daemon, signed_in["refreshToken"]).status_code == 200
    assert refresh(daemon, anonymous["refreshToken"]).json()["user_id"] == anonymous["localId"]
    assert refresh(daemon, revoked["refreshToken"]).status_code == 400
    assert auth.verify_id_token(signed_in["idToken"], app=admin, check_revoked=True)["role"] == "editor"
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(revoked["idToken"], app=admin, check_revoked=True)
    again = client(daemon, "signInWithPassword", {"email": "off@example.com", "password": PASSWORD}).json()
    assert again["error"]["message"] == "USER_DISABLED"
    # The signing key survived too: a token minted before the restart still verifies here.
    lookup = client(daemon, "lookup", {"idToken": signed_in["idToken"]})
    assert lookup.status_code == 200 and lookup.json()["users"][0]["localId"] == "ada"


def test_sigkill_under_load_loses_no_acknowledged_sign_up(daemon, admin):
    acknowledged, stop = [], threading.Event()
    lock = threading.Lock()

    def sign_up_until_stopped():
        session = requests.Session()
        while not stop.is_set():
            try:
                resp = session.post(
                    f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params=KEY, json={}, timeout=5
                )
            except requests.RequestException:
                return
            if resp.status_code == 200:
                with lock:
                    acknowledged.append(resp.json()["localId"])

    threads = [threading.Thread(target=sign_up_until_stopped) for _ in range(8)]
    for thread in threads:
        thread.start()
    # Kill once enough sign-ups are acknowledged (a debug build on a busy CI box is slow),
    # with requests still in flight; after a minute, kill anyway and let the count below judge.
    def enough():
        with lock:
            return len(acknowledged) >= 200

    with contextlib.suppress(AssertionError):
        eventually(enough, timeout=60, interval=0.02, message="200 acknowledged sign-ups")
    daemon.kill()
    stop.set()
    for thread in threads:
        thread.join()
    assert len(acknowledged) > 50, "too little load to prove anything"

    verify = subprocess.run([BINARY, "audit", "verify", "--data", daemon.data_dir], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr

    daemon.start()
    found = set()
    for start in range(0, len(acknowledged), 100):
        batch = [auth.UidIdentifier(uid) for uid in acknowledged[start:start + 100]]
        found |= {user.uid for user in auth.get_users(batch, app=admin).users}
    assert found == set(acknowledged)
