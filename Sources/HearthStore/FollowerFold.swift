import Dispatch
import Foundation
import HearthLedger
import HearthProjections
import LMDB
import Synchronization

/// A follower's projections, folded behind its ledger (issue 32). Replication appends the
/// leader's records and commits: all a synchronous leader waits for, as PostgreSQL's
/// `synchronous_commit = on` waits for a standby's flush, not its replay. This thread then
/// folds them with catch-up's pipeline, the code a rebuild runs, so consecutive batches fold
/// as one run of chunks while the next ones are appended. Reads on a follower trail its ledger
/// by the fold's lag (a read that misses asks the leader); a write job first folds whatever
/// is left (`AccountStore.job`), so a promoted leader decides on every record it holds.
final class FollowerFold: Sendable {
    private struct State {
        var requested = false
        var started = false
        var stopping = false
        var paused = 0
        var busy = false
        var waiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Why the last pass failed; `nil` once one succeeds.
        var failure: String?
    }

    private let maintenance: ProjectionMaintenance
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = Pending<Void>()

    init(_ maintenance: ProjectionMaintenance) { self.maintenance = maintenance }

    /// Asks for a fold up to the ledger's head (after an append); starts the thread the first time.
    func request() {
        let (signal, start) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            defer {
                state.requested = true
                state.started = true
            }
            return (!state.requested, !state.started)
        }
        if start { Thread.detachNewThread { [self] in run() } }
        if signal { wake.signal() }
    }

    /// Returns once the projections hold everything up to `sequence`; throws what stopped the
    /// fold getting there.
    func folded(through sequence: UInt64) async throws {
        if try checkpoint() >= sequence { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let refused = state.withLock { state -> Bool in
                guard !state.stopping else { return true }
                state.waiters.append((sequence, continuation))
                return false
            }
            if refused { continuation.resume(throwing: StoreError.closed) } else { request() }
        }
    }

    /// Runs `body` with no fold in progress (dropping a tail), then folds again.
    func paused<T>(_ body: () async throws -> T) async throws -> T {
        state.withLock { $0.paused += 1 }
        defer {
            state.withLock { $0.paused -= 1 }
            request()
        }
        // A pass in progress stops at its next chunk (`shouldStop`).
        while state.withLock({ $0.busy }) { try await Task.sleep(for: .milliseconds(2)) }
        return try await body()
    }

    /// Stops the thread once it has folded what the ledger holds now (the store is closing:
    /// nothing appends any more), so a follower stopped cleanly has its projections at its head;
    /// waiters are told the store closed.
    func stop() {
        let (started, waiters) = state.withLock { state in
            state.stopping = true
            defer { state.waiters = [] }
            return (state.started, state.waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: StoreError.closed) }
        guard started else { return }
        wake.signal()
        finished.wait()
    }

    /// Set once the store closes: no batch may be appended any more (`StoreReplication.apply`
    /// checks inside its transaction), so the last pass can reach the head.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Why the last fold failed, while no later one succeeded (the node is not ready meanwhile).
    var failure: String? { state.withLock { $0.failure } }

    func checkpoint() throws -> UInt64 {
        try translatingErrors { try maintenance.environment.read { try maintenance.projections.checkpoint(in: $0) } }
    }

    /// The least time between the starts of two passes.
    static let interval = Duration.milliseconds(10)

    private func run() {
        defer { finished.deliver(.success(())) }
        var previous: ContinuousClock.Instant?
        while true {
            wake.wait()
            let (go, last) = state.withLock { state -> (Bool, Bool) in
                // Asked while paused: the pause's end asks again.
                state.requested = false
                guard state.stopping || state.paused == 0 else { return (false, false) }
                state.busy = true
                return (true, state.stopping)
            }
            guard go else { continue }
            // Under a steady stream of small batches, a pass at most every `interval`: the
            // batches of that time fold as one run (one pass's threads and commit, not one a
            // batch), and reads trail by at most about that much more. Nobody waits meanwhile
            // for a fold they asked for; a stop does not wait.
            if !last, let previous, case let rest = Self.interval - previous.duration(to: .now), rest > .zero,
                state.withLock({ $0.waiters.isEmpty })
            {
                Thread.sleep(forTimeInterval: Double(rest.components.seconds) + Double(rest.components.attoseconds) / 1e18)
            }
            previous = .now
            var failure = pass()
            // Closing: a batch appended while the pass began is folded too (none can follow),
            // for as long as each pass gets further: a pass a pause interrupted (a tail being
            // dropped as the store closes) returns having folded nothing, and would again.
            while last, failure == nil, let before = unfolded() {
                failure = pass()
                guard failure == nil, let after = unfolded(), after.folded > before.folded else { break }
            }
            let checkpoint = try? checkpoint()
            let released = state.withLock { state in
                state.busy = false
                state.failure = failure.map { "\($0)" }
                var released: [CheckedContinuation<Void, any Error>] = []
                state.waiters.removeAll { waiter in
                    guard failure != nil || (checkpoint ?? 0) >= waiter.sequence else { return false }
                    released.append(waiter.continuation)
                    return true
                }
                return released
            }
            for continuation in released {
                if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
            }
            if last { return }
            // A failed pass is tried again in a second, whether or not more records arrive
            // (readiness says why meanwhile).
            if failure != nil {
                Thread.sleep(forTimeInterval: 1)
                request()
            }
        }
    }

    /// The projections' checkpoint while the ledger holds records past it (`nil` when it holds
    /// none, or either can not be read).
    private func unfolded() -> (folded: UInt64, head: UInt64)? {
        guard let head = try? maintenance.environment.read({ try maintenance.ledger.head(in: $0).sequence }),
            let folded = try? checkpoint(), folded < head
        else { return nil }
        return (folded, head)
    }

    /// One catch-up to the head. A write that moved the checkpoint meanwhile (a promoted
    /// leader's job folded the tail itself) fails the pass's next chunk: it starts again from
    /// there. Returns what stopped it otherwise (a pause is no failure).
    private func pass() -> (any Error)? {
        let shouldStop = { [self] in state.withLock { $0.paused > 0 } }
        for _ in 0..<3 {
            do {
                try maintenance.catchUp(shouldStop: shouldStop)
                return nil
            } catch ProjectionError.concurrentWrite {
                continue
            } catch ProjectionError.interrupted {
                return nil
            } catch {
                return StoreError.replication("folding the replicated records: \(error)")
            }
        }
        return StoreError.replication("folding the replicated records: the projections kept changing under the fold")
    }
}
