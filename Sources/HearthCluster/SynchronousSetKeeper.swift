import HearthStore

/// The leader's keeping of its `SynchronousSet`, a step per elector tick, apart from etcd and
/// the store so its safety can be checked on its own (`SynchronousSetProperties`). A move to
/// other followers goes in three steps, Patroni's order:
/// 1. writes wait for the old and the new followers both (`widen`), and the head is read then:
///    every write acknowledged before is at or below it, every one after is confirmed by both;
/// 2. once the new followers confirm that head, the new set is recorded in etcd (`record`);
/// 3. only then do writes wait for the new followers alone.
/// So at every moment, the followers etcd names hold every acknowledged write.
struct SynchronousSetKeeper: Sendable {
    /// The set as etcd holds it.
    private(set) var current: SynchronousSet
    /// A move under way: the set, the head its followers must confirm, and since when.
    private(set) var moving: (set: SynchronousSet, target: UInt64?, since: ContinuousClock.Instant)?

    /// How long a move may wait for its followers before it is dropped (tried again later).
    var catchUpLimit: Duration

    init(_ current: SynchronousSet, catchUpLimit: Duration) {
        self.current = current
        self.catchUpLimit = catchUpLimit
    }

    enum Step: Sendable, Equatable {
        case none
        /// Writes must wait for this now; then read the head and pass it to `widened(head:)`.
        case widen(SynchronousCommit.Requirement)
        /// Record this set in etcd, within the term; then `recorded(_:)`.
        case record(SynchronousSet)
        /// Writes wait for this again: the move was dropped.
        case narrow(SynchronousCommit.Requirement)
    }

    /// What to do next, given the followers' confirmations and the head.
    mutating func step(
        confirmations: [String: SynchronousCommit.Confirmation], head: UInt64, now: ContinuousClock.Instant, configured: Int,
        live: Duration, slack: UInt64
    ) -> Step {
        if let moving {
            if let target = moving.target, moving.set.followers.allSatisfy({ (confirmations[$0]?.sequence ?? 0) >= target }) {
                return .record(moving.set)
            }
            guard now - moving.since > catchUpLimit else { return .none }
            self.moving = nil
            return .narrow(current.requirement)
        }
        let wanted = current.wanted(configured: configured, confirmations: confirmations, head: head, now: now, live: live, slack: slack)
        guard wanted != current.followers else { return .none }
        let next = current.with(followers: wanted, configured: configured)
        moving = (next, nil, now)
        return .widen(current.requirement(whileMovingTo: next))
    }

    /// The head read once writes wait for both sets: what the new followers must confirm.
    mutating func widened(head: UInt64) {
        moving?.target = head
    }

    /// etcd recorded the move (or refused it: the term is over); what writes wait for now.
    mutating func recorded(_ succeeded: Bool) -> SynchronousCommit.Requirement {
        if succeeded, let moving { current = moving.set }
        moving = nil
        return current.requirement
    }
}
