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
public final class WriteAuthority: Sendable {
    public enum Standing: Sendable, Equatable {
        /// A single node: every write.
        case always
        /// The leader of `term`, until `until`.
        case leader(term: UInt64, until: ContinuousClock.Instant)
        /// Not the leader; `leader` names the node that is, when one is known.
        case follower(leader: String?)
    }

    private let state: Mutex<Standing>

    public init(_ standing: Standing = .always) {
        state = Mutex(standing)
    }

    public var standing: Standing { state.withLock { $0 } }

    /// This node leads `term` until `deadline` (a renewal moves the deadline; a new term replaces it).
    public func lead(term: UInt64, until deadline: ContinuousClock.Instant) {
        state.withLock { $0 = .leader(term: term, until: deadline) }
    }

    /// This node follows `leader` (or no one known): it writes nothing.
    public func follow(_ leader: String?) {
        state.withLock { $0 = .follower(leader: leader) }
    }

    /// Throws `StoreError.notLeader` unless this node may write at `now`.
    public func check(at now: ContinuousClock.Instant = .now) throws(StoreError) {
        switch standing {
        case .always: return
        case .leader(_, let until) where now < until: return
        case .leader: throw .notLeader(leader: nil)
        case .follower(let leader): throw .notLeader(leader: leader)
        }
    }
}
