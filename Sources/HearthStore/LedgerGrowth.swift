import Synchronization

/// Wakes those waiting for the ledger to grow (a leader's replication long polls) as soon as a
/// write job commits past what they hold, instead of their polling the head. The store tells it
/// the head after every commit, from the writer thread (`AccountStore.init`).
public final class LedgerGrowth: Sendable {
    private struct Waiter {
        var id: UInt64
        var beyond: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var head: UInt64 = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// A batch committed, leaving the ledger's head at `head`: commits are told in order, and a
    /// dropped tail (a former leader's, before it follows) lowers the head, so a long poll after
    /// it waits for what follows, not for what was dropped.
    func grew(to head: UInt64) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.head = head
            var woken: [CheckedContinuation<Void, Never>] = []
            var waiting: [Waiter] = []
            for waiter in state.waiters {
                if waiter.beyond < state.head { woken.append(waiter.continuation) } else { waiting.append(waiter) }
            }
            state.waiters = waiting
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once a commit takes the head past `sequence` (at once if one did), or after
    /// `timeout`, whichever comes first. The commit resumes this task itself, from the writer
    /// thread, ahead of the batch's jobs: the timeout is a task of its own, not a task group's
    /// child, whose parent would be resumed only behind those jobs (at capacity, hundreds of
    /// acknowledged submitters).
    public func wait(beyond sequence: UInt64, atMost timeout: Duration) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        var timer: Task<Void, Never>?
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state -> Bool in
                    guard state.head <= sequence, !Task.isCancelled else { return false }
                    state.waiters.append(Waiter(id: id, beyond: sequence, continuation: continuation))
                    return true
                }
                guard waiting else { return continuation.resume() }
                timer = Task { [self] in
                    try? await Task.sleep(for: timeout)
                    release(id)
                }
            }
        } onCancel: {
            release(id)
        }
        timer?.cancel()
    }

    /// Resumes the waiter `id`, if it still waits (its timeout, or its task cancelled).
    private func release(_ id: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        continuation?.resume()
    }
}
