"""A cluster of real `hearth serve` processes electing a leader through a real etcd (Debian's
etcd-server, started here on loopback): one leader; followers that replicate its ledger, answer
reads (its ID tokens too) and refuse writes in Firebase's envelope; `/readyz` and `hearth cluster
status` saying who leads; a SIGKILLed leader replaced once its lease runs out, the old one back as
a follower, and every node at the same head, digest and verified chain. (Preview: no synchronous
followers yet, so the test lets the followers catch up before the kill.)"""

import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest
import requests

from conftest import BINARY, Daemon, free_port
from waiting import eventually

ETCD = shutil.which("etcd") or "/usr/bin/etcd"


@pytest.fixture
def etcd():
    with tempfile.TemporaryDirectory(prefix="hearth-etcd-") as root:
        client, peer = free_port(), free_port()
        url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
        process = subprocess.Popen(
            [ETCD, "--name", "n1", "--data-dir", os.path.join(root, "etcd"), "--listen-client-urls", url,
             "--advertise-client-urls", url, "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
             "--initial-cluster", f"n1={peer_url}", "--log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def healthy():
            try:
                return requests.get(url + "/health", timeout=1).json().get("health") == "true"
            except requests.RequestException:
                return False

        eventually(healthy, timeout=20, message="etcd to answer /health")
        yield url
        process.terminate()
        process.wait(timeout=10)


TOKEN = "Wd4Kq8Lx2Zr6Vn0Tb3Yh7Jc1Gm5Fs9Pa"


def head(node):
    for line in requests.get(node.url + "/metrics", timeout=5).text.splitlines():
        if line.startswith("hearth_ledger_head_sequence "):
            return int(float(line.split()[1]))
    return None


@pytest.fixture
def cluster(etcd):
    """Three nodes sharing one set of keys (the ledger key, the signing key): as if each follower
    were restored from the first node's backup. Each starts with an empty ledger."""
    with tempfile.TemporaryDirectory(prefix="hearth-cluster-") as root:
        token_file = os.path.join(root, "replication-token")
        with open(token_file, "w") as out:
            out.write(TOKEN + "\n")
        first = os.path.join(root, "n1")
        os.makedirs(first)
        # One start alone makes the data directory's keys; the others get copies.
        alone = Daemon(first, free_port())
        alone.start()
        alone.stop()
        for name in ["n2", "n3"]:
            os.makedirs(os.path.join(root, name))
            for key in os.listdir(first):
                if key == "ledger-key" or key.startswith("signing-key-") or key == "secrets-key":
                    shutil.copy2(os.path.join(first, key), os.path.join(root, name, key))
        nodes = {}
        for name in ["n1", "n2", "n3"]:
            port = free_port()
            settings = {"name": "e2e", "node": name, "etcd": [etcd], "advertiseUrl": f"http://127.0.0.1:{port}", "leaseSeconds": 3,
                        "replicationTokenFile": token_file}
            nodes[name] = Daemon(os.path.join(root, name), port,
                                 env={"HEARTH_CLUSTER": json.dumps(settings), "HEARTH_LOG_LEVEL": "notice"})
        for node in nodes.values():
            node.start()
        yield nodes, token_file
        for node in nodes.values():
            if node.process.poll() is None:
                node.stop()


def cluster_check(node):
    answer = requests.get(node.url + "/readyz", timeout=5).json()
    return answer["checks"].get("cluster", {})


def leaders(nodes):
    return [name for name, node in nodes.items() if node.process.poll() is None and cluster_check(node).get("detail", "").startswith("leader")]


def sign_up(node, email=None):
    body = {"email": email, "password": "secret-123", "returnSecureToken": True} if email else {}
    return requests.post(f"{node.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", json=body, timeout=10)


def lookup(node, id_token):
    return requests.post(f"{node.url}/identitytoolkit.googleapis.com/v1/accounts:lookup?key=k", json={"idToken": id_token}, timeout=10)


def caught_up(nodes, names, leader):
    target = head(nodes[leader])
    return all(head(nodes[name]) == target for name in names)


def digest(data_dir):
    result = subprocess.run([BINARY, "projections", "digest", "--data", data_dir], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_followers_replicate_refuse_writes_and_a_killed_leader_is_replaced(cluster, etcd):
    nodes, token_file = cluster
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    followers = [name for name in nodes if name != leader]
    for name in followers:
        eventually(lambda: cluster_check(nodes[name]).get("detail", "").startswith(f"follower of {leader}"), timeout=10,
                   message=f"{name} to follow {leader}")

    tokens = {}
    for index in range(20):
        answer = sign_up(nodes[leader], f"person{index}@cluster.example")
        assert answer.status_code == 200, answer.text
        tokens[f"person{index}@cluster.example"] = answer.json()["idToken"]
    eventually(lambda: caught_up(nodes, followers, leader), timeout=15, message="the followers to reach the leader's head")
    # A follower answers from its own projections, and verifies the leader's tokens (the same key).
    for name in followers:
        found = lookup(nodes[name], tokens["person7@cluster.example"])
        assert found.status_code == 200, found.text
        assert found.json()["users"][0]["email"] == "person7@cluster.example"
        assert "0 events behind" in cluster_check(nodes[name])["detail"]
        assert "hearth_cluster_replication_lag_seconds " in requests.get(nodes[name].url + "/metrics", timeout=5).text

    refused = sign_up(nodes[followers[0]])
    assert refused.status_code == 503
    assert refused.json()["error"]["status"] == "UNAVAILABLE"
    assert "leader" in refused.json()["error"]["message"]

    # The replication channel wants the cluster's credential.
    assert requests.get(f"{nodes[leader].url}/hearth/v1/cluster/ledger?after=0", timeout=10).status_code == 401
    wrong = requests.get(f"{nodes[leader].url}/hearth/v1/cluster/ledger?after=0", timeout=10,
                         headers={"Authorization": "Bearer " + TOKEN[:-1] + "x"})
    assert wrong.status_code == 401 and not wrong.content.startswith(b"\x01") and not wrong.content.startswith(b"\x02")

    status = subprocess.run([BINARY, "cluster", "status", "--json"], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, HEARTH_CLUSTER=json.dumps(
                                {"name": "e2e", "node": "cli", "etcd": [etcd], "advertiseUrl": "http://127.0.0.1:1",
                                 "replicationTokenFile": token_file})))
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["leader"] == leader
    assert sorted(member["node"] for member in report["members"]) == ["n1", "n2", "n3"]
    assert [m["role"] for m in report["members"] if m["node"] == leader] == ["leader"]

    # SIGKILL: no clean step-down; the others wait out the 3 s lease, then one of them leads.
    killed_at = time.monotonic()
    nodes[leader].kill()
    successor = eventually(lambda: (found := leaders(nodes)) and found[0], timeout=15, message="a new leader")
    assert successor in followers
    eventually(lambda: sign_up(nodes[successor], "after@cluster.example").status_code == 200, timeout=10,
               message="a write on the new leader")
    failover = time.monotonic() - killed_at
    print(f"failover: {failover:.2f} s from SIGKILL to the first acknowledged write on the new leader (3 s lease)")
    assert failover < 10
    other = next(name for name in followers if name != successor)
    eventually(lambda: cluster_check(nodes[other]).get("detail", "").startswith(f"follower of {successor}"), timeout=10,
               message=f"{other} to follow {successor}")
    # Every account the old leader acknowledged is on the new one (the load had stopped and the
    # followers had caught up: without synchronous followers, that is what guarantees it today).
    for email, token in tokens.items():
        assert lookup(nodes[successor], token).status_code == 200, email

    # The old leader comes back as a follower and catches up.
    nodes[leader].start()
    eventually(lambda: cluster_check(nodes[leader]).get("detail", "").startswith(f"follower of {successor}"), timeout=15,
               message=f"{leader} to follow {successor}")
    eventually(lambda: caught_up(nodes, [leader, other], successor), timeout=15, message="every node at the new leader's head")
    for node in nodes.values():
        node.stop()
    digests = {name: digest(node.data_dir) for name, node in nodes.items()}
    assert len(set(digests.values())) == 1, digests
    for node in nodes.values():
        verified = subprocess.run([BINARY, "audit", "verify", "--data", node.data_dir], capture_output=True, text=True, timeout=60)
        assert verified.returncode == 0, verified.stdout + verified.stderr
