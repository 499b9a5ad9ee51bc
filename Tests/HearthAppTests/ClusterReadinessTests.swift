import HearthCluster
import HearthHTTP
import HearthWire
import Testing

@testable import HearthApp

/// `/readyz`'s cluster check: the role, the term, a leader's synchronous followers, a follower's
/// lag; not ready without a leader, without etcd, while replication fails, or while a leader
/// refuses writes its followers did not confirm.
@Suite("readiness: the cluster check")
struct ClusterReadinessTests {
    static func state(_ change: (inout ClusterState.Snapshot) -> Void) -> ClusterState.Snapshot {
        var snapshot = ClusterState.Snapshot()
        snapshot.etcdReachable = true
        change(&snapshot)
        return snapshot
    }

    static let leader = MemberRecord(node: "n1", url: "http://n1:9099", role: .leader, term: 7, at: 0)

    @Test("leader, follower with its lag, and the three ways of not being ready")
    func details() {
        let leading = Readiness.cluster(
            Self.state {
                $0.role = .leader
                $0.term = 7
                $0.leader = Self.leader
            }, applied: 40)
        #expect(leading.ok && leading.detail == "leader, term 7")
        // The role, the term and a follower's lag are members anyone may read (the detail is the operator's).
        #expect(leading.facts == ["role": "leader", "term": 7])
        let synchronous = Self.state {
            $0.role = .leader
            $0.term = 7
            $0.leader = Self.leader
            $0.synchronous = SynchronousSet(leader: "n1", term: 7, followers: ["n3"], required: 1, asynchronous: false)
        }
        let named = Readiness.cluster(synchronous, applied: 40)
        #expect(named.ok && named.detail == "leader, term 7, synchronous followers: n3 (1 required)")
        // A write timed out unconfirmed: the leader refuses writes, and says so.
        let stalled = Readiness.cluster(synchronous, applied: 40, stalled: true)
        #expect(!stalled.ok && stalled.detail?.hasSuffix("refusing writes: its synchronous followers have not confirmed in time") == true)
        let following = Readiness.cluster(
            Self.state {
                $0.term = 7
                $0.leader = Self.leader
                $0.leaderHead = 45
                $0.lagMilliseconds = 12
            }, applied: 40)
        #expect(following.ok && following.detail == "follower of n1, term 7, 5 events behind (12 ms)")
        #expect(following.facts == ["role": "follower", "term": 7, "lagEvents": 5, "lagMilliseconds": 12])
        let leader = Self.state {
            $0.term = 7
            $0.leader = Self.leader
            $0.leaderHead = 45
        }
        // Its projections trail its ledger: ready, and it says by how much.
        let folding = Readiness.cluster(leader, applied: 40, folding: (3, nil))
        #expect(folding.ok && folding.detail == "follower of n1, term 7, 5 events behind, 3 not yet folded")
        // Its projections stopped folding: its reads would go stale, so it is not ready.
        let stuck = Readiness.cluster(leader, applied: 40, folding: (900, "unknown event type"))
        #expect(!stuck.ok && stuck.detail == "follower of n1, term 7, its projections not folding: unknown event type")
        let failing = Readiness.cluster(
            Self.state {
                $0.leader = Self.leader
                $0.replicationError = "diverged"
            }, applied: 40)
        #expect(!failing.ok && failing.detail?.hasSuffix("not replicating: diverged") == true)
        #expect(!Readiness.cluster(Self.state { _ in }, applied: 0).ok)
        #expect(
            !Readiness.cluster(
                Self.state {
                    $0.etcdReachable = false
                    $0.leader = Self.leader
                }, applied: 0
            ).ok)
    }
}
