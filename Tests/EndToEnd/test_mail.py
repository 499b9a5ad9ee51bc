"""Production email delivery: the real binary sends action links through a real SMTP server
(aiosmtpd) with STARTTLS or implicit TLS and AUTH, and retries while the relay is down."""

import datetime
import email
import email.policy
import ipaddress
import os
import ssl
import tempfile
import threading
import urllib.parse

import pytest
import requests
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Daemon, free_port
from waiting import eventually, throughout

API_KEY = "prod-key"
ACTION_URL = "https://app.example.com/auth/action"
SENDER = "no-reply@example.com"
ADMIN_TOKEN = "e2e-admin-token-4b8d2f6a9c1e3057"
SMTP_USER, SMTP_PASSWORD = "hearth", "relay-s3cret"


def self_signed(directory):
    """A certificate for localhost / 127.0.0.1, which the daemon is told to trust."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = os.path.join(directory, "relay.pem"), os.path.join(directory, "relay.key")
    with open(cert_path, "wb") as file:
        file.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as file:
        file.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    return cert_path, context


class Mailbox:
    """What the relay accepted: parsed messages, with whether TLS and AUTH were in force."""

    def __init__(self):
        self.messages = []
        self.refused = []
        self.arrived = threading.Condition()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("refused"):
            self.refused.append(address)
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        # STARTTLS records itself in the session; implicit TLS is the transport's.
        tls = session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None
        with self.arrived:
            self.messages.append(
                {"envelope_to": envelope.rcpt_tos, "envelope_from": envelope.mail_from, "message": message,
                 "tls": tls, "login": session.auth_data}
            )
            self.arrived.notify_all()
        return "250 OK"

    def wait(self, daemon, count=1, timeout=20):
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.messages) >= count, timeout):
                daemon.log.flush()
                with open(daemon.log.name, errors="replace") as log:
                    raise AssertionError("no mail arrived; the daemon said:\n" + log.read()[-3000:])
            return self.messages[count - 1]


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == SMTP_USER.encode() and auth_data.password == SMTP_PASSWORD.encode()
    return AuthResult(success=ok, auth_data=auth_data.login)


def relay(mailbox, port, security, tls_context):
    """An aiosmtpd relay on 127.0.0.1:port: STARTTLS required, TLS from the first byte, or plain."""
    options = {}
    if security == "starttls":
        options = dict(tls_context=tls_context, require_starttls=True, authenticator=authenticator, auth_require_tls=True)
    elif security == "tls":
        # aiosmtpd counts only STARTTLS as TLS for AUTH; this connection is TLS from its first byte.
        options = dict(ssl_context=tls_context, authenticator=authenticator, auth_require_tls=False)
    return Controller(mailbox, hostname="127.0.0.1", port=port, **options)


@pytest.fixture
def production(request):
    """A production-profile daemon that mails through a relay it trusts; yields a starter."""
    root = tempfile.TemporaryDirectory(prefix="hearth-mail-")
    cert_path, tls_context = self_signed(root.name)
    password_file = os.path.join(root.name, "smtp-password")
    with open(password_file, "w") as file:
        file.write(SMTP_PASSWORD + "\n")
    daemons = []

    def start(security, smtp_port):
        data_dir = os.path.join(root.name, "data")
        os.makedirs(data_dir)
        env = {
            "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": f'{{"{API_KEY}": "demo-hearth"}}',
            "HEARTH_ADMIN_TOKENS": ADMIN_TOKEN, "HEARTH_ACTION_URL": ACTION_URL, "HEARTH_APP_NAME": "Hearth Mail Test",
            "HEARTH_MAIL_FROM": SENDER, "HEARTH_SMTP_HOST": "localhost", "HEARTH_SMTP_PORT": str(smtp_port),
            "HEARTH_SMTP_SECURITY": security,
        }
        if security != "none":
            env.update(HEARTH_SMTP_USERNAME=SMTP_USER, HEARTH_SMTP_PASSWORD_FILE=password_file,
                       HEARTH_SMTP_TRUST_ROOTS=cert_path)
        daemon = Daemon(data_dir, free_port(), env=env)
        daemon.start()
        daemons.append(daemon)
        return daemon

    yield start, tls_context
    for daemon in daemons:
        if daemon.process.poll() is None:
            daemon.stop()
    root.cleanup()


def call(daemon, method, body):
    return requests.post(
        f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:{method}", params={"key": API_KEY}, json=body, timeout=30
    )


def metric(daemon, name):
    """A value from the daemon's /metrics (0 while it has none)."""
    text = requests.get(f"{daemon.url}/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10).text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def link_in(message):
    """The action link in the email's text, and its query."""
    text = message.get_body(("plain",)).get_content()
    line = next(line for line in text.splitlines() if line.startswith(ACTION_URL))
    return line, dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(line).query))


@pytest.mark.parametrize("security", ["starttls", "tls"])
def test_password_reset_and_verification_mails(production, security):
    start, tls_context = production
    mailbox, smtp_port = Mailbox(), free_port()
    server = relay(mailbox, smtp_port, security, tls_context)
    server.start()
    try:
        daemon = start(security, smtp_port)
        created = call(daemon, "signUp", {"email": "Reader@Example.com", "password": "first-pass-1", "returnSecureToken": True})
        assert created.status_code == 200, created.text

        sent = call(daemon, "sendOobCode", {"requestType": "PASSWORD_RESET", "email": "reader@example.com"})
        assert sent.status_code == 200 and sent.json()["email"] == "reader@example.com"
        # Apps never see the code in the reply: only the mailbox has it.
        assert "oobCode" not in sent.json()
        delivered = mailbox.wait(daemon, 1)
        assert delivered["tls"] and delivered["login"] == SMTP_USER.encode()
        assert delivered["envelope_from"] == SENDER and delivered["envelope_to"] == ["reader@example.com"]
        message = delivered["message"]
        assert message["Subject"] == "Reset your password for Hearth Mail Test"
        assert message["To"] == "reader@example.com" and SENDER in message["From"]
        link, query = link_in(message)
        assert query["mode"] == "resetPassword" and query["apiKey"] == API_KEY

        # The app's action page would do this with the code from the link.
        reset = call(daemon, "resetPassword", {"oobCode": query["oobCode"], "newPassword": "second-pass-2"})
        assert reset.status_code == 200, reset.text
        assert call(daemon, "signInWithPassword", {"email": "reader@example.com", "password": "first-pass-1"}).status_code == 400
        signed_in = call(daemon, "signInWithPassword", {"email": "reader@example.com", "password": "second-pass-2", "returnSecureToken": True})
        assert signed_in.status_code == 200

        verify = call(daemon, "sendOobCode", {"requestType": "VERIFY_EMAIL", "idToken": signed_in.json()["idToken"]})
        assert verify.status_code == 200, verify.text
        message = mailbox.wait(daemon, 2)["message"]
        assert message["Subject"] == "Verify your email for Hearth Mail Test"
        _, query = link_in(message)
        applied = call(daemon, "update", {"oobCode": query["oobCode"]})
        assert applied.status_code == 200 and applied.json()["emailVerified"] is True

        # Email enumeration protection (production's default) refuses a direct change: the new
        # address is verified first (verifyBeforeUpdateEmail), then the old one is notified,
        # and its link moves the account back.
        direct = call(daemon, "update", {"idToken": signed_in.json()["idToken"], "email": "elsewhere@example.com"})
        assert direct.status_code == 400 and direct.json()["error"]["message"].startswith("OPERATION_NOT_ALLOWED")
        change = call(daemon, "sendOobCode", {"requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": signed_in.json()["idToken"],
                                              "newEmail": "elsewhere@example.com"})
        assert change.status_code == 200, change.text
        delivered = mailbox.wait(daemon, 3)
        assert delivered["envelope_to"] == ["elsewhere@example.com"]
        _, query = link_in(delivered["message"])
        assert query["mode"] == "verifyAndChangeEmail"
        moved = call(daemon, "update", {"oobCode": query["oobCode"]})
        assert moved.status_code == 200 and moved.json()["email"] == "elsewhere@example.com", moved.text
        delivered = mailbox.wait(daemon, 4)
        assert delivered["envelope_to"] == ["reader@example.com"]
        message = delivered["message"]
        assert message["Subject"] == "Your sign-in email was changed for Hearth Mail Test"
        assert "elsewhere@example.com" in message.get_body(("plain",)).get_content()
        _, query = link_in(message)
        assert query["mode"] == "recoverEmail"
        restored = call(daemon, "update", {"oobCode": query["oobCode"]})
        assert restored.status_code == 200 and restored.json()["email"] == "reader@example.com"
    finally:
        server.stop()


def test_links_wait_for_a_relay_that_is_down(production):
    """Plain SMTP to a relay that starts only after the request: the link arrives on a retry."""
    start, tls_context = production
    mailbox, smtp_port = Mailbox(), free_port()
    daemon = start("none", smtp_port)
    sent = call(daemon, "sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": "late@example.com", "continueUrl": "http://localhost/done",
                                        "canHandleCodeInApp": True})
    assert sent.status_code == 200, sent.text
    eventually(lambda: metric(daemon, "hearth_mail_retries_total") >= 1, timeout=10,
               message="the first attempt to fail and a retry to be scheduled")
    server = relay(mailbox, smtp_port, "none", tls_context)
    server.start()
    try:
        delivered = mailbox.wait(daemon, 1, timeout=30)
        assert not delivered["tls"]
        message = delivered["message"]
        assert message["Subject"] == "Sign in to Hearth Mail Test"
        _, query = link_in(message)
        assert query["mode"] == "signIn" and query["continueUrl"] == "http://localhost/done"
        signed_in = call(daemon, "signInWithEmailLink", {"email": "late@example.com", "oobCode": query["oobCode"]})
        assert signed_in.status_code == 200 and signed_in.json()["isNewUser"] is True
    finally:
        server.stop()


def test_a_refused_recipient_is_not_retried_and_does_not_hold_up_others(production):
    start, tls_context = production
    mailbox, smtp_port = Mailbox(), free_port()
    server = relay(mailbox, smtp_port, "none", tls_context)
    server.start()
    try:
        daemon = start("none", smtp_port)
        for address in ["refused@example.com", "accepted@example.com"]:
            link = {"requestType": "EMAIL_SIGNIN", "email": address, "continueUrl": "http://localhost/", "canHandleCodeInApp": True}
            assert call(daemon, "sendOobCode", link).status_code == 200
        assert mailbox.wait(daemon, 1)["envelope_to"] == ["accepted@example.com"]
        # Deliberately past the first retry's delay (1 s): a 5xx is final, so no retry comes.
        throughout(lambda: len(mailbox.refused) <= 1 and len(mailbox.messages) <= 1, 2, interval=0.1,
                   message="no second attempt at either recipient")
        assert mailbox.refused == ["refused@example.com"] and len(mailbox.messages) == 1
        metrics = requests.get(f"{daemon.url}/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10).text
        assert "hearth_mail_delivered_total 1" in metrics and "hearth_mail_failed_total 1" in metrics, metrics[:3000]
        assert "hearth_mail_queue_depth 0" in metrics
        daemon.log.flush()
        with open(daemon.log.name, errors="replace") as log:
            assert "mail not delivered" in log.read()
    finally:
        server.stop()
