import ServiceLifecycle
import Synchronization

/// Opened once, or abandoned if the start never comes; `wait` tells which. The scheduler waits
/// on it until the projections caught up with the ledger: before that, an account's later
/// upgrade may not be folded in yet, and it would look due.
public final class StartSignal: Sendable {
    private enum Phase {
        case waiting, open, abandoned
    }

    private struct State {
        var phase = Phase.waiting
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// The start came: every waiter goes on.
    public func open() { settle(.open) }

    /// Whether the start came.
    public var isOpen: Bool { state.withLock { $0.phase == .open } }

    /// Shutdown came first: waiters give up. No effect once open.
    public func abandon() { settle(.abandoned) }

    private func settle(_ phase: Phase) {
        let (waiters, isOpen) = state.withLock { state in
            if state.phase == .waiting { state.phase = phase }
            defer { state.waiters = [] }
            return (state.waiters, state.phase == .open)
        }
        for waiter in waiters { waiter.resume(returning: isOpen) }
    }

    /// True once open; false if abandoned.
    public func wait() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let settled: Bool? = state.withLock { state in
                switch state.phase {
                case .waiting:
                    state.waiters.append(continuation)
                    return nil
                case .open: return true
                case .abandoned: return false
                }
            }
            if let settled { continuation.resume(returning: settled) }
        }
    }
}

extension StartSignal {
    /// `wait`, for a service: a graceful shutdown or a cancellation before the start abandons
    /// it (false), so a service never begins work it would have to stop at once.
    public func waitUnlessStopped() async -> Bool {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await wait()
            } onGracefulShutdown: {
                self.abandon()
            }
        } onCancel: {
            self.abandon()
        }
    }
}
