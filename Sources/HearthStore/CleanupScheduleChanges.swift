import Synchronization

/// Tells the cleanup scheduler, after a commit, that an account became due earlier than the
/// time it sleeps until (a shorter period, cleanup turned on): it sleeps until the schedule's
/// next due time and no longer, with no polling.
public final class CleanupScheduleChanges: Sendable {
    private struct State {
        /// The earliest due time announced since the last `reset`.
        var earliest: Int64?
        var waiter: (before: Int64, continuation: CheckedContinuation<Void, Never>)?
    }

    private let state = Mutex(State())

    public init() {}

    /// A commit added an entry due at `dueAt`.
    func announce(_ dueAt: Int64) {
        let woken: CheckedContinuation<Void, Never>? = state.withLock { state in
            // Kept even when it wakes the waiter, until the next `reset`: the scheduler is awake
            // for it from here on (`hasEntry` says so before its pass begins).
            state.earliest = min(state.earliest ?? dueAt, dueAt)
            if let waiter = state.waiter, dueAt < waiter.before {
                state.waiter = nil
                return waiter.continuation
            }
            return nil
        }
        woken?.resume()
    }

    /// Forgets earlier announcements: call before reading the schedule, so an announcement
    /// made after that read is not lost.
    public func reset() {
        state.withLock { $0.earliest = nil }
    }

    /// Whether something due before `deadline` was announced since the last `reset`: a
    /// scheduler asleep until `deadline` wakes for it.
    public func hasEntry(before deadline: Int64) -> Bool {
        state.withLock { state in state.earliest.map { $0 < deadline } ?? false }
    }

    /// Returns once something due before `deadline` is announced (at once if it already was
    /// since `reset`), or when the task is cancelled.
    public func waitForEntry(before deadline: Int64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if let earliest = state.earliest, earliest < deadline { return true }
                    if Task.isCancelled { return true }
                    state.waiter = (deadline, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter?.continuation
            }
            waiter?.resume()
        }
    }
}
