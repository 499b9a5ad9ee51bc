import Synchronization

/// Where the scheduler is: starting, in a pass, or asleep until a due time; and how many passes
/// it has finished, so a waiter can wait for the next one. Tests wait on this instead of on real
/// time (`CleanupScheduler.idle()`).
final class SchedulerProgress: Sendable {
    enum Phase: Sendable, Equatable {
        case starting, passing
        /// Until this due time (`nil`: until a commit schedules something).
        case asleep(until: Int64?)
    }

    private struct State {
        var phase = Phase.starting
        var passes = 0
        var waiters: [(passes: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    var current: (phase: Phase, passes: Int) {
        state.withLock { ($0.phase, $0.passes) }
    }

    func passBegan() {
        state.withLock { $0.phase = .passing }
    }

    /// Between a pass and its sleep.
    func passFinished(sleepingUntil wake: Int64?) {
        let ready = state.withLock { state in
            state.phase = .asleep(until: wake)
            state.passes += 1
            let passes = state.passes
            let ready = state.waiters.filter { $0.passes < passes }.map(\.continuation)
            state.waiters.removeAll { $0.passes < passes }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once more than `passes` passes have finished, or the task is cancelled.
    func pass(after passes: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if state.passes > passes || Task.isCancelled { return true }
                    state.waiters.append((passes, continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                defer { state.waiters.removeAll() }
                return state.waiters.map(\.continuation)
            }
            for continuation in waiting { continuation.resume() }
        }
    }
}
