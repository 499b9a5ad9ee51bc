"""A cluster of real `hearth serve` processes electing a leader through a real etcd (Debian's
etcd-server, started here on loopback): one leader; followers that replicate its ledger, answer
reads (its ID tokens too), forward writes to the leader and ask it when they miss; `/readyz` and `hearth cluster
status` saying who leads; a SIGKILLed leader replaced once its lease runs out, the old one back as
a follower, and every node at the same head, digest and verified chain. Then failover under load:
sign-ups sent to every node while the leader is SIGKILLed, round after round
(`HEARTH_FAILOVER_ROUNDS`, 2 here; `scripts/failover-soak` runs 20): every acknowledged sign-up is
on the new leader, and the killed node comes back, drops whatever it wrote unacknowledged, and
follows."""

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import requests

from conftest import BINARY, Daemon, free_port
from waiting import eventually

ETCD = shutil.which("etcd") or "/usr/bin/etcd"


class Etcd:
    """One etcd member on loopback, over a data directory that outlives a stop (so it comes back
    holding the cluster's keys)."""

    def __init__(self, root):
        self.data_dir = os.path.join(root, "etcd")
        client, peer = free_port(), free_port()
        self.url, self.peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [ETCD, "--name", "n1", "--data-dir", self.data_dir, "--listen-client-urls", self.url,
             "--advertise-client-urls", self.url, "--listen-peer-urls", self.peer_url,
             "--initial-advertise-peer-urls", self.peer_url, "--initial-cluster", f"n1={self.peer_url}",
             "--log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def healthy():
            try:
                return requests.get(self.url + "/health", timeout=1).json().get("health") == "true"
            except requests.RequestException:
                return False

        eventually(healthy, timeout=20, message="etcd to answer /health")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def etcd():
    with tempfile.TemporaryDirectory(prefix="hearth-etcd-") as root:
        server = Etcd(root)
        server.start()
        yield server
        if server.process.poll() is None:
            server.stop()


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
    yield from three_nodes(lambda name: etcd.url)


def three_nodes(etcd_url_for):
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
        # The secrets key among them, made at the first start, not at its first use.
        assert os.path.exists(os.path.join(first, "secrets-key"))
        for name in ["n2", "n3"]:
            os.makedirs(os.path.join(root, name))
            for key in os.listdir(first):
                if key == "ledger-key" or key.startswith("signing-key-") or key == "secrets-key":
                    shutil.copy2(os.path.join(first, key), os.path.join(root, name, key))
        nodes = {}
        for name in ["n1", "n2", "n3"]:
            port = free_port()
            settings = {"name": "e2e", "node": name, "etcd": [etcd_url_for(name)], "advertiseUrl": f"http://127.0.0.1:{port}", "leaseSeconds": LEASE_SECONDS,
                        "replicationTokenFile": token_file, "synchronousTimeoutSeconds": 2}
            nodes[name] = Daemon(os.path.join(root, name), port,
                                 env={"HEARTH_CLUSTER": json.dumps(settings), "HEARTH_LOG_LEVEL": "notice"})
        for node in nodes.values():
            node.start()
        yield nodes, token_file
        for node in nodes.values():
            if node.process.poll() is None:
                node.stop()


# 3 s keeps CI's share short; the soak runs with issue 32's 5 s (scripts/failover-soak).
LEASE_SECONDS = int(os.environ.get("HEARTH_CLUSTER_LEASE_SECONDS", "3"))


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


def stop_and_compare(nodes):
    """Stops every node, the leader last: their projections' digests are equal (they are at the
    same head), and every chain verifies. A leader stopped first hands its key on at once (a clean
    stop steps down): a follower elected while the others stop writes its term's first record,
    which they may never receive, and the heads differ."""
    leading = leaders(nodes)
    for name in sorted(nodes, key=lambda name: name in leading):
        nodes[name].stop()
    digests = {name: digest(node.data_dir) for name, node in nodes.items()}
    if len(set(digests.values())) != 1:
        # Which tables differ, each node's checkpoint and chain head: what a diagnosis starts from.
        for name, node in nodes.items():
            tables = subprocess.run([BINARY, "projections", "digest", "--tables", "--data", node.data_dir],
                                    capture_output=True, text=True, timeout=60)
            verified = subprocess.run([BINARY, "audit", "verify", "--data", node.data_dir], capture_output=True, text=True, timeout=60)
            print(f"{name}:\n{tables.stdout}{verified.stdout}")
    assert len(set(digests.values())) == 1, digests
    for node in nodes.values():
        verified = subprocess.run([BINARY, "audit", "verify", "--data", node.data_dir], capture_output=True, text=True, timeout=60)
        assert verified.returncode == 0, verified.stdout + verified.stderr


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

    # A write sent to a follower is forwarded to the leader and answered with its result; the
    # other follower, asked at once, never says the new account does not exist (it asks the
    # leader when it has not applied it yet): read-your-writes.
    for attempt in range(10):
        forwarded = sign_up(nodes[followers[0]], f"via-follower{attempt}@cluster.example")
        assert forwarded.status_code == 200, forwarded.text
        found = lookup(nodes[followers[1]], forwarded.json()["idToken"])
        assert found.status_code == 200, found.text
        assert found.json()["users"][0]["email"] == f"via-follower{attempt}@cluster.example"
    assert admin_lookup(nodes[leader], ["via-follower0@cluster.example"]) == {"via-follower0@cluster.example"}
    assert 'hearth_cluster_forwarded_requests_total{reason="write"}' in requests.get(nodes[followers[0]].url + "/metrics", timeout=5).text

    # /readyz names each node's role and term, and a follower's lag, as members of the check.
    assert cluster_check(nodes[leader])["role"] == "leader" and cluster_check(nodes[leader])["term"] >= 1
    for name in followers:
        eventually(lambda: (check := cluster_check(nodes[name]))["role"] == "follower" and check.get("lagEvents") == 0,
                   timeout=10, message=f"{name} to report its lag")

    # The replication channel wants the cluster's credential.
    assert requests.get(f"{nodes[leader].url}/hearth/v1/cluster/ledger?after=0", timeout=10).status_code == 401
    for path in ("ledger/hash?at=1", "ledger/keys?streams=1"):
        assert requests.get(f"{nodes[leader].url}/hearth/v1/cluster/{path}", timeout=10).status_code == 401, path
    wrong = requests.get(f"{nodes[leader].url}/hearth/v1/cluster/ledger?after=0", timeout=10,
                         headers={"Authorization": "Bearer " + TOKEN[:-1] + "x"})
    assert wrong.status_code == 401 and not wrong.content.startswith(b"\x01") and not wrong.content.startswith(b"\x02")

    status = subprocess.run([BINARY, "cluster", "status", "--json"], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, HEARTH_CLUSTER=json.dumps(
                                {"name": "e2e", "node": "cli", "etcd": [etcd.url], "advertiseUrl": "http://127.0.0.1:1",
                                 "replicationTokenFile": token_file})))
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["leader"] == leader
    assert sorted(member["node"] for member in report["members"]) == ["n1", "n2", "n3"]
    assert [m["role"] for m in report["members"] if m["node"] == leader] == ["leader"]
    # One follower is synchronous: it holds every acknowledged write, and may take over.
    assert len(report["synchronousFollowers"]) == 1 and report["synchronousFollowers"][0] in followers, report
    assert report["requiredFollowers"] == 1 and report["asynchronous"] is False
    assert [m["node"] for m in report["members"] if m["synchronous"]] == report["synchronousFollowers"]

    # SIGKILL: no clean step-down; the others wait out the lease, then one of them leads.
    killed_at = time.monotonic()
    nodes[leader].kill()
    successor = eventually(lambda: (found := leaders(nodes)) and found[0], timeout=15, message="a new leader")
    assert successor in followers
    eventually(lambda: sign_up(nodes[successor], "after@cluster.example").status_code == 200, timeout=10,
               message="a write on the new leader")
    failover = time.monotonic() - killed_at
    print(f"failover: {failover:.2f} s from SIGKILL to the first acknowledged write on the new leader ({LEASE_SECONDS} s lease)")
    assert failover < 10
    other = next(name for name in followers if name != successor)
    eventually(lambda: cluster_check(nodes[other]).get("detail", "").startswith(f"follower of {successor}"), timeout=10,
               message=f"{other} to follow {successor}")
    # Every account the old leader acknowledged is on the new one.
    for email, token in tokens.items():
        assert lookup(nodes[successor], token).status_code == 200, email

    # The old leader comes back as a follower and catches up.
    nodes[leader].start()
    eventually(lambda: cluster_check(nodes[leader]).get("detail", "").startswith(f"follower of {successor}"), timeout=15,
               message=f"{leader} to follow {successor}")
    eventually(lambda: caught_up(nodes, [leader, other], successor), timeout=15, message="every node at the new leader's head")
    stop_and_compare(nodes)


class Load:
    """Sign-ups sent round-robin to every node by a few threads, each acknowledged one kept."""

    def __init__(self, nodes, threads=6):
        self.nodes = nodes
        self.acknowledged = {}  # email -> ID token
        self.answered = {}  # node name -> (when sent, when acknowledged) of each sign-up it acknowledged
        self.last_answer = {}  # node name -> wall-clock time its last acknowledgment arrived
        self.refused = 0
        self.lock = threading.Lock()
        self.running = True
        self.threads = [threading.Thread(target=self.run, args=(index,), daemon=True) for index in range(threads)]
        self.sequence = 0

    def run(self, index):
        names = sorted(self.nodes)
        count = 0
        while self.running:
            name = names[(index + count) % len(names)]
            node = self.nodes[name]
            count += 1
            with self.lock:
                self.sequence += 1
                email = f"load{self.sequence}@cluster.example"
            if node.process.poll() is not None:
                continue
            sent = time.monotonic()
            try:
                answer = sign_up(node, email)
            except requests.RequestException:
                continue
            with self.lock:
                if answer.status_code == 200:
                    self.acknowledged[email] = answer.json()["idToken"]
                    self.answered.setdefault(name, []).append((sent, time.monotonic()))
                    self.last_answer[name] = time.time()
                else:
                    assert answer.status_code == 503, answer.text
                    self.refused += 1

    def first_acknowledged(self, name, sent_after):
        """Seconds from `sent_after` to the first acknowledgment by `name` of a sign-up sent after it
        (one sent before may have been forwarded to the old leader and answered by it)."""
        with self.lock:
            times = [answered for sent, answered in self.answered.get(name, []) if sent > sent_after]
        return times and min(times) - sent_after

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_):
        self.running = False
        for thread in self.threads:
            thread.join(timeout=30)


def admin_lookup(node, emails):
    answer = requests.post(f"{node.url}/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:lookup",
                           json={"email": emails}, headers={"Authorization": "Bearer owner"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return {user["email"] for user in answer.json().get("users", [])}


def test_failover_under_load_loses_no_acknowledged_write(cluster):
    nodes, _ = cluster
    rounds = int(os.environ.get("HEARTH_FAILOVER_ROUNDS", "2"))
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    # The followers join the synchronous set once they follow: wait for the leader to name one.
    eventually(lambda: "synchronous followers: n" in cluster_check(nodes[leader]).get("detail", ""), timeout=20,
               message="a synchronous follower")
    totals = []
    elected_in_order = [leader]
    with Load(nodes) as load:
        for round in range(rounds):
            eventually(lambda: len(load.acknowledged) > (round + 1) * 150, timeout=60, message="sign-ups acknowledged")
            killed_at = time.monotonic()
            nodes[leader].kill()
            before = dict(load.acknowledged)
            successor = eventually(lambda: (found := leaders(nodes)) and found[0], timeout=20, message="a new leader")
            elected = time.monotonic() - killed_at
            eventually(lambda: "synchronous followers: n" in cluster_check(nodes[successor]).get("detail", ""), timeout=20,
                       message="the new leader's synchronous follower")
            synchronous = time.monotonic() - killed_at
            failover = eventually(lambda: load.first_acknowledged(successor, sent_after=killed_at),
                                  timeout=30, message="a sign-up acknowledged by the new leader")
            # Every sign-up acknowledged before the kill is on the new leader.
            missing = set(before) - admin_lookup_all(nodes[successor], list(before))
            assert not missing, f"round {round}: {len(missing)} acknowledged sign-ups lost, e.g. {sorted(missing)[:3]}"
            totals.append((len(before), failover))
            print(f"round {round}: {len(before)} sign-ups acknowledged before SIGKILL of {leader}, all on {successor}; "
                  f"failover {failover:.2f} s (elected {elected:.2f} s, synchronous follower {synchronous:.2f} s)")
            nodes[leader].start()
            eventually(lambda: cluster_check(nodes[leader]).get("detail", "").startswith(f"follower of {successor}"), timeout=30,
                       message=f"{leader} to follow {successor}")
            leader = successor
            elected_in_order.append(successor)
    eventually(lambda: caught_up(nodes, [name for name in nodes if name != leader], leader), timeout=30,
               message="every node at the leader's head")
    final = admin_lookup_all(nodes[leader], list(load.acknowledged))
    assert set(load.acknowledged) <= final
    print(f"{rounds} failovers, {len(load.acknowledged)} sign-ups acknowledged, none lost; {load.refused} refused (503)")
    times = sorted(failover for _, failover in totals)
    print(f"failover with a {LEASE_SECONDS} s lease: median {times[len(times) // 2]:.2f} s, "
          f"{times[0]:.2f}-{times[-1]:.2f} s, from SIGKILL to the first sign-up the new leader acknowledged")
    # Issue 32's target: under 10 s with a 5 s lease (the lease, then an election and a first write).
    assert times[-1] < max(10, LEASE_SECONDS + 5), times
    stop_and_compare(nodes)
    expect_terms(nodes[leader], elected_in_order)


def expect_terms(node, elected_in_order):
    """The ledger says who led when: each term's first record names the node elected, in later
    terms only, and starts from the head before it; the leaders the test saw elected are among
    them, in order, the last one last."""
    starts = term_starts(node)
    terms = [start["payload"]["term"] for start in starts]
    assert terms == sorted(set(terms)), terms
    assert all(start["payload"]["after"] == start["sequence"] - 1 for start in starts), starts
    named = iter(start["payload"]["node"] for start in starts)
    assert all(node in named for node in elected_in_order), (elected_in_order, starts)
    assert starts[-1]["payload"]["node"] == elected_in_order[-1]


def admin_lookup_all(node, emails):
    found = set()
    for start in range(0, len(emails), 100):
        found |= admin_lookup(node, emails[start:start + 100])
    return found


def synchronous_follower(node):
    found = re.search(r"synchronous followers: (n\d)", cluster_check(node).get("detail", ""))
    return found and found.group(1)


def test_no_synchronous_follower_refuses_writes_and_only_a_synchronous_one_takes_over(cluster):
    """The leader's followers die: a write waits out synchronousTimeoutSeconds and is answered
    503, unacknowledged (a sign-up, and a delete of an acknowledged account sent while the
    sign-up waits); the next is refused at once. The leader dies too; the followers come back,
    and only the synchronous one may take over, and does; the old leader comes back, drops the
    writes no one else has (and writes down which), gets the deleted account's key back from the
    new leader, and follows."""
    nodes, _ = cluster
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    synchronous = eventually(lambda: synchronous_follower(nodes[leader]), timeout=20, message="a synchronous follower")
    other = next(name for name in nodes if name not in (leader, synchronous))
    acknowledged = {}
    for index in range(5):
        answer = sign_up(nodes[leader], f"kept{index}@cluster.example")
        assert answer.status_code == 200, answer.text
        acknowledged[f"kept{index}@cluster.example"] = answer.json()["localId"]

    for name in (synchronous, other):
        nodes[name].kill()
    started = time.monotonic()
    # While the sign-up waits for a confirmation, a delete joins it in the tail.
    deleted = {}
    deleting = threading.Thread(target=lambda: (time.sleep(0.3), deleted.update(answer=requests.post(
        f"{nodes[leader].url}/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:delete",
        json={"localId": acknowledged["kept0@cluster.example"]}, headers={"Authorization": "Bearer owner"}, timeout=30))))
    deleting.start()
    unconfirmed = sign_up(nodes[leader], "unconfirmed@cluster.example")
    waited = time.monotonic() - started
    deleting.join(timeout=30)
    assert unconfirmed.status_code == 503 and unconfirmed.json()["error"]["status"] == "UNAVAILABLE", unconfirmed.text
    assert 1.5 < waited < 12, waited  # the 2 s synchronousTimeoutSeconds, and a loaded host's slack
    assert deleted["answer"].status_code == 503, deleted["answer"].text
    started = time.monotonic()
    refused = sign_up(nodes[leader], "refused@cluster.example")
    assert refused.status_code == 503 and time.monotonic() - started < 1.5, refused.text
    check = cluster_check(nodes[leader])
    assert not check["ok"] and "refusing writes" in check["detail"], check
    nodes[leader].kill()
    for name in (other, synchronous):
        nodes[name].start()

    successor = eventually(lambda: (found := leaders(nodes)) and found[0], timeout=30, message="a new leader")
    assert successor == synchronous, f"{successor} took over, but only {synchronous} held every acknowledged write"
    assert admin_lookup_all(nodes[successor], list(acknowledged)) == set(acknowledged)
    assert not admin_lookup(nodes[successor], ["refused@cluster.example"])

    nodes[leader].start()
    eventually(lambda: cluster_check(nodes[leader]).get("detail", "").startswith(f"follower of {successor}"), timeout=30,
               message=f"{leader} to follow {successor}")
    eventually(lambda: caught_up(nodes, [leader, other], successor), timeout=30, message="every node at the new leader's head")
    reports = [name for name in os.listdir(nodes[leader].data_dir) if name.startswith("dropped-tail-")]
    assert len(reports) == 1, reports
    with open(os.path.join(nodes[leader].data_dir, reports[0])) as report:
        dropped = json.load(report)
    assert dropped["leader"] == successor and len(dropped["records"]) >= 2 and dropped["keysRestored"] == 1, dropped
    assert all(len(record["hash"]) == 64 for record in dropped["records"])
    # The unconfirmed sign-up and delete were the old leader's alone: gone with its tail, and the
    # deleted account is back, its email readable (its key came back from the new leader).
    assert not admin_lookup(nodes[leader], ["unconfirmed@cluster.example"])
    assert admin_lookup_all(nodes[leader], list(acknowledged)) == set(acknowledged)
    stop_and_compare(nodes)


def test_a_follower_killed_and_etcd_restarted_under_load_lose_nothing(cluster, etcd):
    """Under sign-up load sent to every node: the synchronous follower is SIGKILLed (the leader
    names the other one in its place and goes on acknowledging), then comes back and catches up;
    then etcd itself stops (the leader stops acknowledging within its lease) and starts again (a
    leader is elected, writes resume). No acknowledged sign-up is lost."""
    nodes, _ = cluster
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    synchronous = eventually(lambda: synchronous_follower(nodes[leader]), timeout=20, message="a synchronous follower")
    other = next(name for name in nodes if name not in (leader, synchronous))
    with Load(nodes) as load:
        eventually(lambda: len(load.acknowledged) > 50, timeout=60, message="sign-ups acknowledged")
        killed_at = time.monotonic()
        nodes[synchronous].kill()
        eventually(lambda: synchronous_follower(nodes[leader]) == other, timeout=20,
                   message=f"{leader} to name {other} synchronous in place of {synchronous}")
        acknowledged = len(load.acknowledged)
        eventually(lambda: len(load.acknowledged) > acknowledged + 10, timeout=30, message="sign-ups acknowledged again")
        print(f"synchronous follower replaced {time.monotonic() - killed_at:.2f} s after its SIGKILL")
        # Meanwhile the leader records more than one replication batch (16,384 records): back, the
        # node catches up over several, asking for each next one while it appends the last.
        for start in range(0, 17_000, 1_000):
            users = [{"localId": f"bulk{n}", "email": f"bulk{n}@cluster.example"} for n in range(start, start + 1_000)]
            answer = requests.post(
                f"{nodes[leader].url}/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:batchCreate",
                json={"users": users}, headers={"Authorization": "Bearer owner"}, timeout=60)
            assert answer.status_code == 200 and not answer.json().get("error"), answer.text
        nodes[synchronous].start()
        eventually(lambda: cluster_check(nodes[synchronous]).get("detail", "").startswith(f"follower of {leader}"), timeout=30,
                   message=f"{synchronous} to follow {leader} again")

        etcd.stop()
        stopped_at = time.monotonic()
        # The leader can no longer renew: it stops acknowledging before its lease (3 s) could
        # have been granted to another node, and says so.
        eventually(lambda: "etcd unreachable" in cluster_check(nodes[leader]).get("detail", ""), timeout=10,
                   message="the leader to see etcd gone")
        time.sleep(4)
        before = len(load.acknowledged)
        time.sleep(2)
        assert len(load.acknowledged) == before, "sign-ups acknowledged with etcd down"
        etcd.start()
        resumed = eventually(lambda: len(load.acknowledged) > before and time.monotonic() - stopped_at, timeout=60,
                             message="sign-ups acknowledged after etcd came back")
        print(f"etcd down for {resumed:.2f} s of sign-ups refused; a leader again afterwards")
        eventually(lambda: len(load.acknowledged) > before + 20, timeout=60, message="more sign-ups")
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    eventually(lambda: caught_up(nodes, [name for name in nodes if name != leader], leader), timeout=30,
               message="every node at the leader's head")
    assert set(load.acknowledged) <= admin_lookup_all(nodes[leader], list(load.acknowledged))
    print(f"{len(load.acknowledged)} sign-ups acknowledged, none lost; {load.refused} refused (503)")
    stop_and_compare(nodes)


def test_a_new_node_joins_from_the_leaders_snapshot(cluster, etcd):
    """`hearth cluster join` fills an empty data directory with the leader's hot snapshot over the
    replication channel (ledger, projections and every key file); the node then starts, follows,
    publishes the same JWKS and accepts the leader's tokens. A wrong credential, or a directory
    that is not empty, is refused."""
    nodes, token_file = cluster
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    tokens = []
    for index in range(5):
        answer = sign_up(nodes[leader], f"before-join{index}@cluster.example")
        assert answer.status_code == 200, answer.text
        tokens.append(answer.json()["idToken"])
    root = os.path.dirname(nodes[leader].data_dir)
    data = os.path.join(root, "n4")
    port = free_port()
    settings = {"name": "e2e", "node": "n4", "etcd": [etcd.url], "advertiseUrl": f"http://127.0.0.1:{port}", "leaseSeconds": 3,
                "replicationTokenFile": token_file, "synchronousTimeoutSeconds": 2}

    def join(directory, settings=settings):
        return subprocess.run([BINARY, "cluster", "join", "--data", directory], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, HEARTH_CLUSTER=json.dumps(settings)))

    wrong_token = os.path.join(root, "wrong-token")
    with open(wrong_token, "w") as out:
        out.write(TOKEN[:-1] + "x\n")
    refused = join(data, dict(settings, replicationTokenFile=wrong_token))
    assert refused.returncode != 0 and "401" in refused.stderr, refused.stderr
    assert not os.path.exists(data) or os.listdir(data) == []

    joined = join(data)
    assert joined.returncode == 0, joined.stdout + joined.stderr
    assert "chain verified" in joined.stdout, joined.stdout
    for name in os.listdir(nodes[leader].data_dir):
        if name == "ledger-key" or name == "secrets-key" or name.startswith("signing-key-"):
            with open(os.path.join(nodes[leader].data_dir, name), "rb") as theirs, open(os.path.join(data, name), "rb") as ours:
                assert theirs.read() == ours.read(), name
            assert os.stat(os.path.join(data, name)).st_mode & 0o077 == 0, name
    assert not [name for name in os.listdir(data) if name.endswith(".partial")]
    again = join(data)
    assert again.returncode != 0 and "not empty" in again.stderr, again.stderr

    newcomer = Daemon(data, port, env={"HEARTH_CLUSTER": json.dumps(settings), "HEARTH_LOG_LEVEL": "notice"})
    newcomer.start()
    try:
        eventually(lambda: cluster_check(newcomer).get("detail", "").startswith(f"follower of {leader}"), timeout=30,
                   message=f"n4 to follow {leader}")
        eventually(lambda: head(newcomer) == head(nodes[leader]), timeout=30, message="n4 at the leader's head")
        jwks = requests.get(newcomer.url + "/.well-known/jwks.json", timeout=5).json()
        assert jwks == requests.get(nodes[leader].url + "/.well-known/jwks.json", timeout=5).json()
        for token in tokens:
            assert lookup(newcomer, token).status_code == 200
    finally:
        newcomer.stop()


def kids(node):
    return [key["kid"] for key in requests.get(node.url + "/.well-known/jwks.json", timeout=5).json()["keys"]]


def token_kid(token):
    header = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]


def test_signing_key_rotation_reaches_every_node(cluster):
    """`hearth keys rotate`, sent to a follower, is forwarded to the leader, which makes the key
    and records its publication; each follower fetches the key file over the replication channel
    and publishes it too. After the overlap every node signs with it (tokens from any node verify
    on any other), and after the retirement period the old key is in no node's JWKS."""
    nodes, _ = cluster
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    eventually(lambda: "synchronous followers: n" in cluster_check(nodes[leader]).get("detail", ""), timeout=20,
               message="a synchronous follower")
    followers = [name for name in nodes if name != leader]
    [original] = kids(nodes[leader])
    before = sign_up(nodes[leader], "before-rotation@example.com").json()
    assert token_kid(before["idToken"]) == original

    rotate = subprocess.run([BINARY, "keys", "rotate", "--daemon", f"127.0.0.1:{nodes[followers[0]].port}",
                             "--overlap-seconds", "10", "--retire-after-seconds", "12"], capture_output=True, text=True, timeout=30)
    assert rotate.returncode == 0, rotate.stderr
    rotated = json.loads(rotate.stdout)
    new = rotated["keyId"]
    assert rotated["replaces"] == original and new != original
    # Published everywhere before it signs anything.
    eventually(lambda: all(sorted(kids(node)) == sorted([original, new]) for node in nodes.values()), timeout=10,
               message="every node to publish both keys")
    assert time.time() * 1000 < rotated["activatesAt"], "the followers published the key only after it began signing"
    for name in nodes:
        assert os.path.exists(os.path.join(nodes[name].data_dir, f"signing-key-{new}.pem")), name

    def signed_with_new_key_everywhere():
        return all(token_kid(sign_up(nodes[name], f"after-{name}-{time.monotonic_ns()}@example.com").json()["idToken"]) == new
                   for name in nodes)

    eventually(signed_with_new_key_everywhere, timeout=40, message="every node to sign with the new key")
    refreshed = requests.post(f"{nodes[followers[1]].url}/securetoken.googleapis.com/v1/token?key=k",
                              json={"grantType": "refresh_token", "refreshToken": before["refreshToken"]}, timeout=10).json()
    assert token_kid(refreshed["id_token"]) == new
    for name in nodes:
        assert lookup(nodes[name], refreshed["id_token"]).status_code == 200, name
        assert lookup(nodes[name], before["idToken"]).status_code == 200, name
    eventually(lambda: all(kids(node) == [new] for node in nodes.values()), timeout=40,
               message="every node to withdraw the old key")
    status = subprocess.run([BINARY, "keys", "status", "--daemon", f"127.0.0.1:{nodes[followers[1]].port}"],
                            capture_output=True, text=True, timeout=30)
    assert status.returncode == 0 and json.loads(status.stdout) == {"signing": new, "published": [new]}, status.stdout + status.stderr
    stop_and_compare(nodes)
    # A backup carries the rotated key, checked against its kid, and restores.
    with tempfile.TemporaryDirectory(prefix="hearth-rotated-backup-") as root:
        target, restored = os.path.join(root, "backup"), os.path.join(root, "restored")
        made = subprocess.run([BINARY, "backup", "--data", nodes[followers[0]].data_dir, "--to", target, "--unauthenticated"],
                              capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stdout + made.stderr
        manifest = json.load(open(os.path.join(target, "hearth-backup.json")))
        assert {"name": f"signing-key-{new}.pem", "keyID": new}.items() <= next(
            f for f in manifest["files"] if f["name"] == f"signing-key-{new}.pem").items()
        back = subprocess.run([BINARY, "restore", "--from", target, "--data", restored, "--allow-unauthenticated"],
                              capture_output=True, text=True, timeout=120)
        assert back.returncode == 0, back.stdout + back.stderr
        assert os.path.exists(os.path.join(restored, f"signing-key-{new}.pem"))


def test_a_leader_lacking_a_pending_keys_file_fetches_it_from_a_node_that_holds_it(cluster):
    """The node that made a key is gone, and the one elected after it never fetched its file:
    while the key is pending, the new leader asks the other nodes for it and, once one sends it,
    activates the key when due, rather than abandoning the rotation. Made here by stopping every
    node after the rotation and deleting the file from two of them: those two start first (one
    leads), the holder after."""
    nodes, _ = cluster
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    eventually(lambda: "synchronous followers: n" in cluster_check(nodes[leader]).get("detail", ""), timeout=20,
               message="a synchronous follower")
    [original] = kids(nodes[leader])
    rotate = subprocess.run([BINARY, "keys", "rotate", "--daemon", f"127.0.0.1:{nodes[leader].port}",
                             "--overlap-seconds", "40", "--retire-after-seconds", "600"], capture_output=True, text=True, timeout=30)
    assert rotate.returncode == 0, rotate.stderr
    new = json.loads(rotate.stdout)["keyId"]
    eventually(lambda: all(sorted(kids(node)) == sorted([original, new]) for node in nodes.values()), timeout=10,
               message="every node to publish both keys")
    holder = next(name for name in nodes if name != leader)
    lacking = [name for name in nodes if name != holder]
    for name in sorted(nodes, key=lambda name: name == leader):
        nodes[name].stop()
    logged = {name: os.path.getsize(nodes[name].log_path) for name in nodes}
    for name in lacking:
        os.remove(os.path.join(nodes[name].data_dir, f"signing-key-{new}.pem"))
    for name in lacking:
        nodes[name].start()
    elected = eventually(lambda: (found := leaders({name: nodes[name] for name in lacking})) and found[0], timeout=30,
                         message="a leader among the nodes lacking the file")
    assert time.time() * 1000 < json.loads(rotate.stdout)["activatesAt"], "the key fell due before the holder started"
    nodes[holder].start()
    eventually(lambda: all(os.path.exists(os.path.join(nodes[name].data_dir, f"signing-key-{new}.pem")) for name in nodes),
               timeout=20, message="every node to hold the key's file again")

    def signed_with_new_key_everywhere():
        return all(token_kid(sign_up(nodes[name], f"fetched-{name}-{time.monotonic_ns()}@example.com").json()["idToken"]) == new
                   for name in nodes)

    eventually(signed_with_new_key_everywhere, timeout=60, message="every node to sign with the key the leader fetched")
    with open(nodes[elected].log_path, "rb") as log:
        log.seek(logged[elected])
        text = log.read().decode(errors="replace")
    assert f"fetched the file of signing key {new}" in text
    assert "abandoned the rotation" not in text
    stop_and_compare(nodes)


class Proxy:
    """A TCP relay between one node and etcd that the test can cut (every connection closed, new
    ones refused) and mend: a network partition between that node and etcd alone, its clients
    and the other nodes still reaching it."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.cut_off = False
        self.open = []
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut_off:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.relay, args=(source, sink), daemon=True).start()

    @staticmethod
    def relay(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.cut_off = True
        with self.lock:
            for end in self.open:
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.open = []

    def mend(self):
        self.cut_off = False


@pytest.fixture
def partitionable(etcd):
    proxies = {name: Proxy(int(etcd.url.rsplit(":", 1)[1])) for name in ["n1", "n2", "n3"]}
    for nodes, token_file in three_nodes(lambda name: proxies[name].url):
        yield nodes, proxies


def test_a_leader_cut_off_from_etcd_alone_stops_acknowledging_before_another_is_elected(partitionable):
    """The leader loses etcd but not its clients nor the other nodes: it stops acknowledging
    writes before its lease could lapse, so before another node can be elected (its last
    acknowledgment arrives before the new term's first record); the new leader holds every
    acknowledged write; mended, the old leader drops what it wrote unacknowledged and follows."""
    nodes, proxies = partitionable
    leader = eventually(lambda: (found := leaders(nodes)) and len(found) == 1 and found[0], timeout=30,
                        message="exactly one leader")
    eventually(lambda: "synchronous followers: n" in cluster_check(nodes[leader]).get("detail", ""), timeout=20,
               message="a synchronous follower")
    # The load goes to the leader alone, so each acknowledgment is the leader's own (a follower's
    # would be a forwarded one, answered under the follower's name).
    with Load({leader: nodes[leader]}, threads=3) as load:
        eventually(lambda: len(load.acknowledged) > 100, timeout=60, message="sign-ups acknowledged")
        proxies[leader].cut()
        successor = eventually(lambda: (found := [name for name in leaders(nodes) if name != leader]) and found[0], timeout=30,
                               message="another leader")
        eventually(lambda: sign_up(nodes[successor], f"after-partition-{time.monotonic_ns()}@example.com").status_code == 200,
                   timeout=30, message="writes acknowledged by the new leader")
        time.sleep(1)
    starts = term_starts(nodes[successor])
    new_term = starts[-1]
    assert new_term["payload"]["node"] == successor
    # Seconds from the old leader's last acknowledgment to the new term's start: the old leader
    # fenced itself at least a fifth of the lease (0.6 s) before the lease could lapse.
    gap = new_term["recordedAtMs"] / 1000 - load.last_answer[leader]
    assert gap > 0, f"{leader} acknowledged a write {-gap:.3f} s after {successor}'s term began"
    print(f"partition: {leader}'s last acknowledgment {gap:.2f} s before {successor}'s term began")
    missing = set(load.acknowledged) - admin_lookup_all(nodes[successor], list(load.acknowledged))
    assert not missing, f"{len(missing)} acknowledged sign-ups lost, e.g. {sorted(missing)[:3]}"
    proxies[leader].mend()
    eventually(lambda: cluster_check(nodes[leader]).get("detail", "").startswith(f"follower of {successor}"), timeout=30,
               message=f"{leader} to follow {successor}")
    eventually(lambda: caught_up(nodes, [name for name in nodes if name != successor], successor), timeout=30,
               message="every node at the leader's head")
    stop_and_compare(nodes)


def term_starts(node):
    replay = subprocess.run([BINARY, "audit", "replay", "--data", node.data_dir, "--type", "cluster.term_started"],
                            capture_output=True, text=True, timeout=60)
    assert replay.returncode == 0, replay.stderr
    return [json.loads(line) for line in replay.stdout.splitlines()]
