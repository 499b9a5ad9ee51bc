import Foundation
import HearthAuth
import HearthStore
import Logging
import ServiceLifecycle
import Synchronization

/// Keeps the store (and with it the data directory's lock) open while the server runs, and
/// closes it at shutdown, after the HTTP server has drained (services stop in reverse order).
struct StoreService: Service {
    let store: AccountStore
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        store.close()
        logger.info("ledger closed")
    }

    /// Brings the projections up to the ledger's head before the server starts (normally
    /// nothing: they commit together; after an upgrade that changed their format, a rebuild).
    /// It runs on a thread of its own, so the event loops stay free to take the signal; a
    /// shutdown or cancellation stops it between chunks with `StoreError.interrupted`, and
    /// what it applied is kept for the next start.
    static func catchUp(_ store: AccountStore, logger: Logger) async throws {
        let behind = try store.maintenance.eventsBehind()
        let head = try store.ledgerHead()
        logger.info("ledger open", metadata: ["head": "\(head.sequence)", "projectionsBehind": "\(behind)"])
        guard behind > 0 else { return }
        SystemdNotifier.notify("STATUS=bringing the projections up to the ledger's head")
        let start = ContinuousClock.now
        let stop = StopRequest()
        let applied = try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await onOwnThread { try store.maintenance.catchUp(shouldStop: stop.isRequested) }
            } onGracefulShutdown: {
                stop.request()
            }
        } onCancel: {
            stop.request()
        }
        logger.info("projections caught up", metadata: ["events": "\(applied)", "duration": "\(ContinuousClock.now - start)"])
    }
}

/// Ends the signing and hashing threads once everything that could use them has stopped (it is
/// the first service, so the last to stop).
struct WorkersService: Service {
    let context: AuthContext

    func run() async throws {
        try? await gracefulShutdown()
        context.stopWorkers()
    }
}

/// A flag one thread raises and another polls.
private final class StopRequest: Sendable {
    private let flag = Atomic(false)

    func request() { flag.store(true, ordering: .releasing) }

    func isRequested() -> Bool { flag.load(ordering: .acquiring) }
}

/// Runs blocking `work` on a new thread and waits for it without holding an event loop.
private func onOwnThread<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
