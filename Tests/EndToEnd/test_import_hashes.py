"""firebase-admin's import_users with other systems' password hashes: each user signs in with
the old password, and then again after Hearth has re-hashed it. The hashes are made here, in
Python (hashlib, cryptography), independently of Hearth's Swift verifiers."""

import base64
import hashlib
import hmac
import os

import requests
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from firebase_admin import auth

KEY = {"key": "e2e-key"}
PASSWORD = "old-system-pw-1"


def firebase_scrypt(password, salt, signer_key, separator, rounds, mem_cost):
    derived = hashlib.scrypt(password, salt=salt + separator, n=2**mem_cost, r=rounds, p=1, dklen=32, maxmem=2**26)
    encryptor = Cipher(algorithms.AES(derived), modes.CTR(b"\0" * 16)).encryptor()
    return encryptor.update(signer_key) + encryptor.finalize()


def sign_in(daemon, email, password):
    return requests.post(
        f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
        params=KEY, json={"email": email, "password": password, "returnSecureToken": True}, timeout=60,
    )


def import_one(daemon, admin, uid, hash_alg, password_hash, salt=None):
    email = f"{uid}@example.com"
    user = auth.ImportUserRecord(uid, email=email, password_hash=password_hash, password_salt=salt)
    result = auth.import_users([user], hash_alg=hash_alg, app=admin)
    assert (result.success_count, result.failure_count) == (1, 0)
    assert sign_in(daemon, email, "not-the-password").json()["error"]["message"] == "INVALID_PASSWORD"
    for attempt in ("imported hash", "re-hashed"):
        reply = sign_in(daemon, email, PASSWORD)
        assert reply.status_code == 200, (uid, attempt, reply.text)
        assert auth.verify_id_token(reply.json()["idToken"], app=admin)["uid"] == uid


def test_imported_hashes_sign_in_with_the_old_password(daemon, admin):
    password = PASSWORD.encode()
    salt = os.urandom(12)
    signer_key, separator = os.urandom(64), b"\x07"
    import_one(
        daemon, admin, "from-firebase",
        auth.UserImportHash.scrypt(key=signer_key, rounds=8, memory_cost=14, salt_separator=separator),
        firebase_scrypt(password, salt, signer_key, separator, 8, 14), salt)
    import_one(
        daemon, admin, "from-pbkdf2", auth.UserImportHash.pbkdf2_sha256(rounds=2000),
        hashlib.pbkdf2_hmac("sha256", password, salt, 2000, 32), salt)
    hmac_key = os.urandom(32)
    import_one(
        daemon, admin, "from-hmac", auth.UserImportHash.hmac_sha256(key=hmac_key),
        hmac.new(hmac_key, salt + password, hashlib.sha256).digest(), salt)
    import_one(
        daemon, admin, "from-standard-scrypt",
        auth.UserImportHash.standard_scrypt(memory_cost=1024, parallelization=1, block_size=8, derived_key_length=32),
        hashlib.scrypt(password, salt=salt, n=1024, r=8, p=1, dklen=32), salt)
