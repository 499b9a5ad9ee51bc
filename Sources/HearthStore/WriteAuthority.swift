import Synchronization

/// Whether this node may write, and acknowledge what it wrote. A single node always may. In a
/// cluster only the leader may, and only until its lease's fencing deadline, which the elector
/// moves forward at each renewal: once it passes, etcd may grant the leader key to another node,
/// so nothing is acknowledged after it, even a write that already committed here (its caller
/// gets `StoreError.notLeader`; the record is an unacknowledged tail the node drops when it
/// rejoins as a follower).
///
/// The deadline is an instant of the monotonic clock, checked by the write path itself: a
/// leader cut off from etcd stops acknowledging on time even if the elector's task never runs.
///
/// A term the elector begins (`begin`) writes nothing before its `cluster.term_started` record
/// (`AccountStore.startTerm`): every record of the term follows the one that names its leader.
/// The write job checks that inside its own transaction (`begunTerm`).
public final class WriteAuthority: Sendable {
    public enum Standing: Sendable, Equatable {
        /// A single node: every write.
        case always
        /// The leader of `term`, until `until`.
        case leader(term: UInt64, until: ContinuousClock.Instant)
        /// Not the leader; `leader` names the node that is, when one is known.
        case follower(leader: String?)
    }

    private struct State {
        var standing: Standing
        /// Whether the term led now must find its start recorded before any other write.
        var startsWithRecord = false
    }

    private let state: Mutex<State>

    public init(_ standing: Standing = .always) {
        state = Mutex(State(standing: standing))
    }

    public var standing: Standing { state.withLock { $0.standing } }

    /// This node leads `term` until `deadline` (a renewal moves the deadline; a new term replaces it).
    public func lead(term: UInt64, until deadline: ContinuousClock.Instant) {
        state.withLock {
            if case .leader(let led, _) = $0.standing, led != term { $0.startsWithRecord = false }
            $0.standing = .leader(term: term, until: deadline)
        }
    }

    /// This node was elected for `term`, until `deadline`: it writes the term's start first.
    public func begin(term: UInt64, until deadline: ContinuousClock.Instant) {
        state.withLock { $0 = State(standing: .leader(term: term, until: deadline), startsWithRecord: true) }
    }

    /// The term this node was elected for (`begin`), while it leads it: every write of the
    /// term must find that term the ledger's latest (its start recorded first).
    var begunTerm: UInt64? {
        state.withLock { state in
            guard state.startsWithRecord, case .leader(let term, _) = state.standing else { return nil }
            return term
        }
    }

    /// This node follows `leader` (or no one known): it writes nothing.
    public func follow(_ leader: String?) {
        state.withLock { $0 = State(standing: .follower(leader: leader)) }
    }

    /// Throws `StoreError.notLeader` unless this node may write at `now` (for `term`, when given).
    public func check(at now: ContinuousClock.Instant = .now, term expected: UInt64? = nil) throws(StoreError) {
        switch standing {
        case .always: if expected != nil { throw .notLeader(leader: nil) }
        case .leader(let term, let until) where now < until: if let expected, expected != term { throw .notLeader(leader: nil) }
        case .leader: throw .notLeader(leader: nil)
        case .follower(let leader): throw .notLeader(leader: leader)
        }
    }
}
