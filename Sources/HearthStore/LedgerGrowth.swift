import Synchronization

/// Wakes those waiting for the ledger to grow (a leader's replication long polls) as soon as a
/// write job commits past what they hold, instead of their polling the head.
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

    /// A job committed, leaving the ledger's head at `head`.
    func grew(to head: UInt64) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.head = max(state.head, head)
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
    /// `timeout`, whichever comes first.
    public func wait(beyond sequence: UInt64, atMost timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(beyond: sequence) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func wait(beyond sequence: UInt64) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.head <= sequence, !Task.isCancelled else { return true }
                    state.waiters.append(Waiter(id: id, beyond: sequence, continuation: continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            cancelled?.resume()
        }
    }
}
