import HearthCluster
import HearthHTTP
import HearthScheduler
import HearthStore
import HearthWire

/// What `/readyz` checks: the ledger reads, the projections caught up with it at start, the
/// writer commits (an empty job through it, bounded by a deadline), the disk is not full.
enum Readiness {
    static let writerDeadline: Duration = .seconds(2)

    static func checks(store: AccountStore, caughtUp: StartSignal, cluster: ClusterState?) async -> [ReadinessCheck] {
        var checks: [ReadinessCheck] = []
        do {
            let head = try store.ledgerHead()
            checks.append(ReadinessCheck(name: "ledger", ok: true, detail: "head \(head.sequence)"))
        } catch {
            checks.append(ReadinessCheck(name: "ledger", ok: false, detail: "\(error)"))
        }
        checks.append(ReadinessCheck(name: "projections", ok: caughtUp.isOpen, detail: caughtUp.isOpen ? nil : "catching up"))
        checks.append(await writer(store))
        let diskFullSince = store.writeHealth.diskFullSince
        checks.append(ReadinessCheck(name: "disk", ok: diskFullSince == nil, detail: diskFullSince.map { _ in "full: writes refused" }))
        if let cluster {
            checks.append(
                Self.cluster(
                    cluster.snapshot, applied: (try? store.ledgerHead().sequence) ?? 0, stalled: store.synchronousCommit.isStalled,
                    folding: (try? store.replication.folding()) ?? (0, nil)))
        }
        return checks
    }

    /// The node's role and term, a leader's synchronous followers and a follower's lag; ready
    /// while a leader is known (this node or another), etcd answers, a follower replicates and a
    /// leader's synchronous followers confirm (`stalled`: a write timed out unconfirmed), and its
    /// projections fold what it applies (`folding`: records not yet folded, and why the last fold failed).
    static func cluster(
        _ state: ClusterState.Snapshot, applied: UInt64, stalled: Bool = false, folding: (behind: UInt64, failure: String?) = (0, nil)
    ) -> ReadinessCheck {
        var facts: [String: JSONValue] = ["role": .string(state.role.rawValue)]
        if let term = state.term { facts["term"] = .int(term) }
        let lag = state.leaderHead.map { head in head > applied ? head - applied : 0 }
        if state.role == .follower {
            if let lag { facts["lagEvents"] = .int(Int64(clamping: lag)) }
            if let milliseconds = state.lagMilliseconds { facts["lagMilliseconds"] = .int(milliseconds) }
        }
        func check(_ ok: Bool, _ detail: String) -> ReadinessCheck { ReadinessCheck(name: "cluster", ok: ok, detail: detail, facts: facts) }
        let term = state.term.map { ", term \($0)" } ?? ""
        guard state.etcdReachable else { return check(false, "etcd unreachable\(term)") }
        switch (state.role, state.leader) {
        case (.leader, _):
            let followers = state.synchronous.map { set in
                set.asynchronous
                    ? ", asynchronous"
                    : ", synchronous followers: \(set.followers.isEmpty ? "none" : set.followers.joined(separator: ", ")) (\(set.required) required)"
            }
            guard !stalled else {
                return check(
                    false, "leader\(term)\(followers ?? ""), refusing writes: its synchronous followers have not confirmed in time")
            }
            return check(true, "leader\(term)\(followers ?? "")")
        case (.follower, let leader?):
            if let error = state.replicationError {
                return check(false, "follower of \(leader.node)\(term), not replicating: \(error)")
            }
            if let failure = folding.failure {
                return check(false, "follower of \(leader.node)\(term), its projections not folding: \(failure)")
            }
            let behind = lag.map { ", \($0) events behind" } ?? ""
            let delay = state.lagMilliseconds.map { " (\($0) ms)" } ?? ""
            let unfolded = folding.behind > 0 ? ", \(folding.behind) not yet folded" : ""
            return check(true, "follower of \(leader.node)\(term)\(behind)\(delay)\(unfolded)")
        case (.follower, nil): return check(false, "no leader known")
        }
    }

    private static func writer(_ store: AccountStore) async -> ReadinessCheck {
        do {
            try await store.probeWriter(within: writerDeadline)
            return ReadinessCheck(name: "writer", ok: true)
        } catch {
            return ReadinessCheck(name: "writer", ok: false, detail: "\(error)")
        }
    }
}
