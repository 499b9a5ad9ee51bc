import Synchronization

/// A cluster leader's promise to its clients (issue 32): a write is acknowledged only once the
/// synchronous followers hold it on disk. Each follower's next replication request, `after` its
/// new head, confirms (`confirm`) that it fsynced everything up to there; a write waits
/// (`acknowledge`) until every follower the requirement names has confirmed its sequence, and
/// there are at least as many of them as it asks for.
///
/// A write that waits longer than `timeout` is answered `StoreError.notReplicated`, never
/// acknowledged; from then on the leader refuses new writes at once (`checkAccepting`), instead
/// of committing more that no follower holds, until its synchronous followers have confirmed
/// the write that timed out. It never degrades to acknowledging alone.
public final class SynchronousCommit: Sendable {
    /// Whose confirmation a write needs.
    public enum Requirement: Sendable, Equatable {
        /// No one's: a single node, a cluster run asynchronously, or a first leader with no
        /// followers yet.
        case none
        /// Every one of `nodes`, and no fewer than `atLeast` of them.
        case followers(Set<String>, atLeast: Int)
    }

    /// A follower's last confirmation: the sequence it holds on disk, and when it said so.
    public struct Confirmation: Sendable, Equatable {
        public var sequence: UInt64
        public var at: ContinuousClock.Instant

        public init(sequence: UInt64, at: ContinuousClock.Instant) {
            self.sequence = sequence
            self.at = at
        }
    }

    private struct Waiter {
        var id: UInt64
        var sequence: UInt64
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var requirement = Requirement.none
        var confirmations: [String: Confirmation] = [:]
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var sweeping = false
        /// The sequence of a write that timed out, while it is not yet confirmed.
        var stalledAt: UInt64?
        var timeout: Duration = .seconds(10)
        var timedOut = 0

        func confirmed(_ sequence: UInt64) -> Bool {
            switch requirement {
            case .none: return true
            case .followers(let nodes, let atLeast):
                guard nodes.count >= atLeast else { return false }
                return nodes.allSatisfy { (confirmations[$0]?.sequence ?? 0) >= sequence }
            }
        }

        /// Takes out the waiters whose writes are confirmed; clears the stall once its write is.
        mutating func release() -> [CheckedContinuation<Void, any Error>] {
            if let stalledAt, confirmed(stalledAt) { self.stalledAt = nil }
            var released: [CheckedContinuation<Void, any Error>] = []
            var waiting: [Waiter] = []
            for waiter in waiters {
                if confirmed(waiter.sequence) { released.append(waiter.continuation) } else { waiting.append(waiter) }
            }
            waiters = waiting
            return released
        }
    }

    private let state = Mutex(State())

    public init() {}

    public var requirement: Requirement { state.withLock { $0.requirement } }

    /// How long a write waits for its followers before it is answered `notReplicated`.
    public var timeout: Duration {
        get { state.withLock { $0.timeout } }
        set { state.withLock { $0.timeout = newValue } }
    }

    /// Each follower's last confirmation, by node.
    public var confirmations: [String: Confirmation] { state.withLock { $0.confirmations } }

    /// Writes answered `notReplicated` so far.
    public var timedOut: Int { state.withLock { $0.timedOut } }

    /// Whether new writes are refused, a write having timed out unconfirmed.
    public var isStalled: Bool { state.withLock { $0.stalledAt != nil } }

    /// Whether a write at `sequence` may be acknowledged now.
    public func isConfirmed(_ sequence: UInt64) -> Bool { state.withLock { $0.confirmed(sequence) } }

    public func require(_ requirement: Requirement) {
        let released = state.withLock { state in
            state.requirement = requirement
            return state.release()
        }
        for continuation in released { continuation.resume() }
    }

    /// `node` holds everything up to `sequence` on disk.
    public func confirm(_ node: String, through sequence: UInt64, at now: ContinuousClock.Instant = .now) {
        let released = state.withLock { state in
            state.confirmations[node] = Confirmation(sequence: sequence, at: now)
            return state.release()
        }
        for continuation in released { continuation.resume() }
    }

    /// Writes waiting for their confirmations (for tests that must know one waits).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// A new term: no follower has confirmed anything to this leader yet, and no one waits.
    public func reset(_ requirement: Requirement) {
        let abandoned = state.withLock { state in
            let waiters = state.waiters
            state = State(requirement: requirement, nextID: state.nextID, timeout: state.timeout, timedOut: state.timedOut)
            return waiters
        }
        for waiter in abandoned { waiter.continuation.resume(throwing: StoreError.notLeader(leader: nil)) }
    }

    /// Throws unless this node accepts writes: not while a write it committed waits unconfirmed
    /// past its timeout.
    public func checkAccepting() throws(StoreError) {
        if state.withLock({ $0.stalledAt != nil }) { throw .notReplicated }
    }

    /// Returns once `sequence` is confirmed as the requirement asks; throws `notReplicated` past
    /// the timeout.
    public func acknowledge(_ sequence: UInt64) async throws {
        // A single node's path: no continuation, no suspension.
        if isConfirmed(sequence) { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let startSweeper = state.withLock { state -> Bool? in
                guard !state.confirmed(sequence) else { return nil }
                state.nextID += 1
                state.waiters.append(
                    Waiter(id: state.nextID, sequence: sequence, deadline: .now + state.timeout, continuation: continuation))
                defer { state.sweeping = true }
                return !state.sweeping
            }
            switch startSweeper {
            case nil: continuation.resume()
            case true?: Task { await sweep() }
            case false?: break
            }
        }
    }

    /// Answers the waiters whose deadline passed, while there are any.
    private func sweep() async {
        while true {
            try? await Task.sleep(for: .milliseconds(50))
            let now = ContinuousClock.now
            let (expired, more) = state.withLock { state in
                var expired: [Waiter] = []
                state.waiters.removeAll { waiter in
                    guard waiter.deadline <= now else { return false }
                    expired.append(waiter)
                    return true
                }
                if let latest = expired.map(\.sequence).max() {
                    state.stalledAt = max(state.stalledAt ?? 0, latest)
                    state.timedOut += expired.count
                }
                if state.waiters.isEmpty { state.sweeping = false }
                return (expired, !state.waiters.isEmpty)
            }
            for waiter in expired { waiter.continuation.resume(throwing: StoreError.notReplicated) }
            if !more { return }
        }
    }
}
