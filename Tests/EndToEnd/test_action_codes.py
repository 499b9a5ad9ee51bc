"""Email action links from the real firebase-admin SDK, followed over HTTP against the real
binary; the ledger records who caused each event, from where."""

import json
import subprocess

import pytest
import requests
from firebase_admin import auth

from conftest import BINARY

KEY = {"key": "e2e-key"}


def sign_in(daemon, email, password):
    return requests.post(
        f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
        params=KEY, json={"email": email, "password": password, "returnSecureToken": True}, timeout=30,
    )


def test_reset_and_verification_links(daemon, admin):
    user = auth.create_user(email="links@example.com", password="first-password-1", app=admin)
    assert not user.email_verified

    verify_link = auth.generate_email_verification_link("links@example.com", app=admin)
    assert verify_link.startswith(daemon.url + "/emulator/action?mode=verifyEmail&")
    assert requests.get(verify_link, timeout=30).json()["authEmulator"]["email"] == "links@example.com"
    assert auth.get_user(user.uid, app=admin).email_verified

    reset_link = auth.generate_password_reset_link("links@example.com", app=admin)
    asked = requests.get(reset_link, timeout=30)
    assert asked.status_code == 400 and "newPassword" in asked.json()["authEmulator"]["urlTemplate"]
    done = requests.get(reset_link + "&newPassword=second-password-2", timeout=30)
    assert done.status_code == 200, done.text
    assert sign_in(daemon, "links@example.com", "first-password-1").json()["error"]["message"] == "INVALID_PASSWORD"
    signed_in = sign_in(daemon, "links@example.com", "second-password-2")
    assert signed_in.status_code == 200
    # Used links are spent.
    assert requests.get(reset_link + "&newPassword=third-password-3", timeout=30).status_code == 400
    with pytest.raises(auth.EmailNotFoundError):
        auth.generate_password_reset_link("nobody@example.com", app=admin)

    # The ledger holds the reset, who did it (the link's user) and the peer address.
    replay = subprocess.run(
        [BINARY, "audit", "replay", "--data", daemon.data_dir, "--uid", user.uid], capture_output=True, text=True, check=True
    )
    events = [json.loads(line) for line in replay.stdout.splitlines()]
    reset = next(event for event in events if event["type"] == "account.password_set")
    assert reset["payload"]["reason"] == "reset"
    assert reset["metadata"]["clientIp"] == "127.0.0.1"
    assert reset["metadata"]["actor"] == "end_user"
    created = events[0]
    assert created["type"] == "account.created" and created["metadata"]["actor"] == "admin"
