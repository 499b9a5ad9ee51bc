"""A cluster of real `hearth serve` processes electing a leader through a real etcd (Debian's
etcd-server, started here on loopback): one leader, followers that refuse writes in Firebase's
envelope, `/readyz` and `hearth cluster status` saying who leads, and a SIGKILLed leader replaced
once its lease runs out. (Preview: followers do not replicate the ledger yet.)"""

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


@pytest.fixture
def cluster(etcd):
    with tempfile.TemporaryDirectory(prefix="hearth-cluster-") as root:
        nodes = {}
        for name in ["n1", "n2", "n3"]:
            data = os.path.join(root, name)
            os.makedirs(data)
            port = free_port()
            settings = {"name": "e2e", "node": name, "etcd": [etcd], "advertiseUrl": f"http://127.0.0.1:{port}", "leaseSeconds": 3}
            nodes[name] = Daemon(data, port, env={"HEARTH_CLUSTER": json.dumps(settings), "HEARTH_LOG_LEVEL": "notice"})
        for node in nodes.values():
            node.start()
        yield nodes
        for node in nodes.values():
            if node.process.poll() is None:
                node.stop()


def cluster_check(node):
    answer = requests.get(node.url + "/readyz", timeout=5).json()
    return answer["checks"].get("cluster", {})


def leaders(nodes):
    return [name for name, node in nodes.items() if node.process.poll() is None and cluster_check(node).get("detail", "").startswith("leader")]


def sign_up(node):
    return requests.post(f"{node.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", json={}, timeout=10)


def test_one_leader_followers_refuse_writes_and_a_killed_leader_is_replaced(cluster, etcd):
    leader = eventually(lambda: (found := leaders(cluster)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    followers = [name for name in cluster if name != leader]
    for name in followers:
        eventually(lambda: cluster_check(cluster[name]).get("detail", "").startswith(f"follower of {leader}"), timeout=10,
                   message=f"{name} to follow {leader}")

    assert sign_up(cluster[leader]).status_code == 200
    refused = sign_up(cluster[followers[0]])
    assert refused.status_code == 503
    assert refused.json()["error"]["status"] == "UNAVAILABLE"
    assert "leader" in refused.json()["error"]["message"]

    status = subprocess.run([BINARY, "cluster", "status", "--json"], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, HEARTH_CLUSTER=json.dumps(
                                {"name": "e2e", "node": "cli", "etcd": [etcd], "advertiseUrl": "http://127.0.0.1:1"})))
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["leader"] == leader
    assert sorted(member["node"] for member in report["members"]) == ["n1", "n2", "n3"]
    assert [m["role"] for m in report["members"] if m["node"] == leader] == ["leader"]

    # SIGKILL: no clean step-down; the others wait out the 3 s lease, then one of them leads.
    killed_at = time.monotonic()
    cluster[leader].kill()
    successor = eventually(lambda: (found := leaders(cluster)) and found[0], timeout=15, message="a new leader")
    assert successor in followers
    eventually(lambda: sign_up(cluster[successor]).status_code == 200, timeout=10, message="a write on the new leader")
    assert time.monotonic() - killed_at < 10
    other = next(name for name in followers if name != successor)
    eventually(lambda: cluster_check(cluster[other]).get("detail", "").startswith(f"follower of {successor}"), timeout=10,
               message=f"{other} to follow {successor}")
