"""firebase-admin's own custom tokens (unsigned, emulator mode) sign in, and the ID token the
daemon mints verifies in the SDK with the developer claims on top, across a refresh too."""

import requests
from firebase_admin import auth

KEY = {"key": "e2e-key"}


def test_sdk_custom_token_signs_in_with_its_claims(daemon, admin):
    token = auth.create_custom_token("backend-42", {"role": "editor", "tier": 3}, app=admin).decode()
    signed_in = requests.post(
        f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken",
        params=KEY, json={"token": token, "returnSecureToken": True}, timeout=30,
    ).json()
    assert signed_in["isNewUser"] is True
    decoded = auth.verify_id_token(signed_in["idToken"], app=admin, check_revoked=True)
    assert decoded["uid"] == "backend-42"
    assert (decoded["role"], decoded["tier"]) == ("editor", 3)
    assert decoded["firebase"]["sign_in_provider"] == "custom"
    assert auth.get_user("backend-42", app=admin).uid == "backend-42"

    refreshed = requests.post(
        f"{daemon.url}/securetoken.googleapis.com/v1/token",
        params=KEY, data={"grant_type": "refresh_token", "refresh_token": signed_in["refreshToken"]}, timeout=30,
    ).json()
    assert auth.verify_id_token(refreshed["id_token"], app=admin)["role"] == "editor"
