import CoreMetrics
import HearthDomain
import HearthStore
import Logging
import ServiceLifecycle

/// Forgets the addresses of action codes that expired unused: one that names no account has
/// them sealed under a key of its own, which would otherwise live on. Sleeps until the next
/// code expires (at most `longestSleep`, so a code sent meanwhile with a shorter life waits no
/// longer than that), then records `oob_code.expired` for each code due, a bounded batch per
/// transaction; the event destroys the code's key in the same write and the projections keep
/// only a marker, so using the code still answers EXPIRED_OOB_CODE.
public struct ActionCodeSweeper: Service {
    let store: AccountStore
    let clock: any SleepingClock
    let started: StartSignal
    let batchSize: Int
    /// Milliseconds.
    let longestSleep: Int64
    let logger: Logger
    private let swept = Counter(label: "hearth_action_codes_expired_total")

    public init(
        store: AccountStore, clock: any SleepingClock, startsAfter started: StartSignal, batchSize: Int = 1024,
        longestSleep: Int64 = 600_000, logger: Logger
    ) {
        self.store = store
        self.clock = clock
        self.started = started
        self.batchSize = batchSize
        self.longestSleep = longestSleep
        self.logger = logger
    }

    static let metadata = Metadata(actor: .scheduler, actorId: "action-code-sweep")

    public func run() async throws {
        let ready = await started.waitUnlessStopped()
        guard ready else { return }
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do {
                        let forgotten = try await sweepDue()
                        if forgotten > 0 { logger.info("expired action codes forgotten", metadata: ["codes": "\(forgotten)"]) }
                    } catch StoreError.notLeader, StoreError.notReplicated {
                        // A cluster's follower (the leader sweeps), or a leader whose followers
                        // do not confirm: look again later.
                        try await clock.sleep(until: clock.now() + SchedulerTiming.followerRetry)
                        continue
                    }
                    let next = try store.read { try $0.nextCodeExpiry() }
                    try await clock.sleep(until: min(next ?? .max, clock.now() + longestSleep))
                }
            }
        } catch is CancellationError {
        } catch StoreError.closed {
        } catch {
            logger.critical("the action code sweep failed", metadata: ["error": "\(error)"])
            throw error
        }
    }

    /// Records the expiry of every code due at the clock's now, a batch per transaction;
    /// returns how many.
    public func sweepDue() async throws -> Int {
        var total = 0
        while !Task.isCancelled {
            let now = clock.now()
            let due = try store.read { try $0.codesExpired(by: now, limit: batchSize) }
            if due.isEmpty { break }
            let results = try await store.executeAll(
                due.map { .expireOOBCode($0.0, codeHash: $0.1) }, metadata: Self.metadata)
            let batch = results.count { if case .success(let events) = $0 { !events.isEmpty } else { false } }
            total += batch
            swept.increment(by: batch)
            // Every one refused: the index and the codes disagree (a bug); wait for the next pass.
            if batch == 0 {
                logger.error("action code sweep refused whole", metadata: ["codes": "\(due.count)"])
                break
            }
            await Task.yield()
        }
        return total
    }
}
