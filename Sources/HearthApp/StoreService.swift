import HearthStore
import Logging
import ServiceLifecycle

/// Keeps the store (and with it the data directory's lock) open while the server runs, and
/// closes it at shutdown, after the HTTP server has drained (services stop in reverse order).
struct StoreService: Service {
    let store: AccountStore
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        SystemdNotifier.notify("STOPPING=1")
        store.close()
        logger.info("ledger closed")
    }

    /// Brings the projections up to the ledger's head before the server starts (normally
    /// nothing: they commit together; after an upgrade that changed their format, a rebuild).
    /// A shutdown signal stops it between chunks with `StoreError.interrupted`; what it
    /// applied is kept for the next start.
    static func catchUp(_ store: AccountStore, logger: Logger) throws {
        let behind = try store.maintenance.eventsBehind()
        let head = try store.ledgerHead()
        logger.info("ledger open", metadata: ["head": "\(head.sequence)", "projectionsBehind": "\(behind)"])
        guard behind > 0 else { return }
        SystemdNotifier.notify("STATUS=bringing the projections up to the ledger's head")
        let start = ContinuousClock.now
        let applied = try store.maintenance.catchUp(shouldStop: { Task.isCancelled || Task.isShuttingDownGracefully })
        logger.info("projections caught up", metadata: ["events": "\(applied)", "duration": "\(ContinuousClock.now - start)"])
    }
}
