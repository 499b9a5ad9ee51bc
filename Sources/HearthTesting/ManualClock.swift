import HearthDomain
import HearthScheduler
import Synchronization

/// A wall clock that moves only when told: tests of expiry and the 30-day cleanup move it
/// instead of sleeping (time is injected). A sleeper wakes when the clock is moved past its time.
public final class ManualClock: SleepingClock {
    private struct State {
        var now: Int64
        var sleepers: [Int: (until: Int64, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextSleeper = 0
    }

    private let state: Mutex<State>

    /// Starts at 2026-01-01T00:00:00Z unless told otherwise.
    public init(_ start: Int64 = 1_767_225_600_000) { state = Mutex(State(now: start)) }

    public func now() -> Int64 { state.withLock { $0.now } }

    public func advance(milliseconds: Int64) {
        let woken = state.withLock { state in
            state.now += milliseconds
            let due = state.sleepers.filter { $0.value.until <= state.now }
            for key in due.keys { state.sleepers[key] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    public func advance(days: Int64) { advance(milliseconds: days * 86_400_000) }

    /// How many tasks sleep on this clock (a test waits for the scheduler to go to sleep).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until instant: Int64) async throws {
        let id = state.withLock { state in
            defer { state.nextSleeper += 1 }
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if instant <= state.now { return .success(()) }
                    state.sleepers[id] = (instant, continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                defer { state.sleepers[id] = nil }
                return state.sleepers[id]
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
