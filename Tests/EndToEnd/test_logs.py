"""Logs: one structured line per request (method, path, status, latency, request id, client),
never a token, password or code; the request id comes back as X-Request-Id and is recorded in
the events' metadata; HEARTH_LOG_FORMAT=json gives one JSON object per line."""

import concurrent.futures
import json
import os
import re
import subprocess
import tempfile

import requests

from conftest import BINARY, Daemon, free_port


def test_json_request_lines_with_the_request_id(tmp_path):
    data = os.path.join(tmp_path, "data")
    os.makedirs(data)
    daemon = Daemon(data, free_port(), env={"HEARTH_LOG_FORMAT": "json", "HEARTH_LOG_LEVEL": "info"})
    daemon.start()
    try:
        reply = requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=secret-looking-key",
                              json={"email": "logged@example.com", "password": "hunter2-password", "returnSecureToken": True})
        assert reply.status_code == 200
        request_id = reply.headers["X-Request-Id"]
        assert request_id
        refresh = reply.json()["refreshToken"]
        requests.post(f"{daemon.url}/securetoken.googleapis.com/v1/token?key=k",
                      data={"grant_type": "refresh_token", "refresh_token": refresh})
    finally:
        daemon.stop()
    daemon.log.flush()
    with open(daemon.log_path) as log:
        text = log.read()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert all({"time", "level", "label", "message"} <= set(line) for line in lines)
    requests_logged = [line for line in lines if line["message"] == "request"]
    sign_up = next(line for line in requests_logged if line["path"].endswith("accounts:signUp"))
    assert sign_up["method"] == "POST" and sign_up["status"] == "200" and sign_up["requestId"] == request_id
    # The client's network, not its address (personal data; logClientAddresses: full keeps it).
    assert sign_up["client"] == "127.0.0.0/24" and float(sign_up["ms"]) >= 0
    assert all(line.get("client") in (None, "127.0.0.0/24", "-") for line in lines)
    # Nothing secret or personal: not the password, the refresh token, the query's key, the email.
    for secret in ["hunter2-password", refresh, "secret-looking-key", "logged@example.com"]:
        assert secret not in text
    # The events the request recorded carry its id.
    shown = subprocess.run([BINARY, "audit", "replay", "--data", data], capture_output=True, text=True)
    assert request_id in shown.stdout, shown.stdout[:2000] + shown.stderr


def test_metrics_count_requests_latency_and_signing(daemon):
    up = requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", json={"returnSecureToken": True})
    assert up.status_code == 200
    text = requests.get(f"{daemon.url}/metrics", timeout=10).text
    assert 'hearth_http_requests_total{route="signUp",status="200"} 1' in text, text[:3000]
    assert 'hearth_http_request_duration_seconds_bucket{route="signUp"' in text
    assert 'hearth_token_signing_duration_seconds_count{algorithm="RS256"} 1' in text
    assert "hearth_ledger_head_sequence" in text and "hearth_disk_full 0" in text
    # The group commit, the map and the ledger's size, and the projections' lag.
    assert re.search(r'^hearth_writer_batch_jobs_count [1-9]', text, re.M), text[:4000]
    assert 'hearth_writer_batch_jobs_bucket{le="1024.0"}' in text or 'hearth_writer_batch_jobs_bucket{le="1024"}' in text
    assert re.search(r'^hearth_writer_commit_duration_seconds_count [1-9]', text, re.M)
    for gauge in ["hearth_ledger_bytes", "hearth_lmdb_map_bytes", "hearth_lmdb_used_bytes"]:
        assert int(float(re.search(rf'^{gauge} (\S+)', text, re.M).group(1))) > 0, gauge
    assert re.search(r'^hearth_projection_lag_events 0', text, re.M)


def test_the_grafana_dashboard_queries_only_metrics_hearth_exports():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "grafana", "hearth-dashboard.json")) as file:
        dashboard = json.load(file)
    queried = {re.sub(r"_(bucket|count|sum)$", "", name)
               for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"hearth_[a-z_]+", target["expr"])}
    sources = ""
    for directory, _, files in os.walk(os.path.join(root, "Sources")):
        sources += "".join(open(os.path.join(directory, f)).read() for f in files if f.endswith(".swift"))
    declared = set(re.findall(r'"(hearth_[a-z_]+)"', sources))
    assert queried and queried <= declared, queried - declared


def test_metrics_count_password_checks_refused_for_a_full_queue(tmp_path):
    # Production (where each address has its share of the queue), and scrypt at N=2^15 (about
    # 0.1 s a check here), which keeps the queue full while the requests arrive.
    token = "metrics-admin-token-0123456789abcdef"
    daemon = Daemon(str(tmp_path), free_port(), env={
        "HEARTH_SCRYPT_LOG_N": "15", "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": json.dumps({"k": "demo-hearth"}),
        "HEARTH_ADMIN_TOKENS": token})
    daemon.start()
    try:
        url = f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts"
        bodies = [{"email": f"queue{index}@example.com", "password": "queue-pw-1"} for index in range(20)]
        for body in bodies:
            assert requests.post(f"{url}:signUp?key=k", json=body, timeout=30).status_code == 200
        # One client, many checks at once (each account's own, within the client's 25 checks under
        # way): past its share of the hashing queue, it is refused.
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            replies = list(pool.map(
                lambda body: requests.post(f"{url}:signInWithPassword?key=k", json=body, timeout=120), bodies))
        refused = [r for r in replies if r.status_code == 400]
        assert refused and all(r.json()["error"]["message"].startswith("TOO_MANY_ATTEMPTS_TRY_LATER") for r in refused)
        text = requests.get(f"{daemon.url}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=10).text
        counted = re.search(r'^hearth_password_hash_refusals_total\{queue="client"\} (\d+)', text, re.M)
        assert counted and int(counted.group(1)) == len(refused), text[:3000]
    finally:
        daemon.stop()
