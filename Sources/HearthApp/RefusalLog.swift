import CoreMetrics
import HearthAuth
import HearthWire
import Logging
import Synchronization

/// The abuse limits' refusals in the log: the first of each client and limit at once, then at
/// most one line a minute for it, with how many were refused meanwhile, so a flood does not
/// flood the log too. (Every refusal is counted by `AbuseGuard.refusals`.)
final class RefusalLog: Sendable {
    private let logger: Logger
    private let addresses: ClientAddressLogging
    private let clock: @Sendable () -> Int64
    /// Per client and limit: when it was last logged, and refusals not logged since.
    private let recent = Mutex<[String: (loggedAt: Int64, unlogged: Int)]>([:])
    static let interval: Int64 = 60_000
    static let tracked = 10_000

    init(logger: Logger, addresses: ClientAddressLogging = .network, clock: @escaping @Sendable () -> Int64) {
        self.logger = logger
        self.addresses = addresses
        self.clock = clock
    }

    func record(_ refusal: AbuseGuard.Refusal) {
        Counter(label: "hearth_abuse_refusals_total", dimensions: [("limit", refusal.limit.rawValue)]).increment()
        let now = clock()
        let key = "\(refusal.limit.rawValue) \(refusal.project) \(refusal.address ?? "")"
        let unlogged: Int? = recent.withLock { recent in
            if let entry = recent[key], now - entry.loggedAt < Self.interval {
                recent[key] = (entry.loggedAt, entry.unlogged + 1)
                return nil
            }
            if recent.count >= Self.tracked {
                recent = recent.filter { now - $0.value.loggedAt < Self.interval }
                // A flood of distinct clients within the minute: start over rather than grow.
                if recent.count >= Self.tracked { recent.removeAll(keepingCapacity: true) }
            }
            let before = recent[key]?.unlogged ?? 0
            recent[key] = (now, 0)
            return before
        }
        guard let unlogged else { return }
        var metadata: Logger.Metadata = ["limit": "\(refusal.limit.rawValue)", "project": "\(refusal.project)"]
        if let address = refusal.address { metadata["client"] = "\(addresses.render(address))" }
        if let wait = refusal.retryAfter { metadata["retryAfterMs"] = "\(wait)" }
        if unlogged > 0 { metadata["refusedSinceLastLine"] = "\(unlogged)" }
        logger.notice("abuse limit refused a request", metadata: metadata)
    }
}
