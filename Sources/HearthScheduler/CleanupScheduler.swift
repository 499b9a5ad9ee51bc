import CoreMetrics
import HearthDomain
import HearthStore
import Logging
import ServiceLifecycle

/// Anonymous auto-cleanup (once a project turns it on, an anonymous account is deleted 30 days
/// after its creation, or after the switch for one that existed then), run: sleeps until the
/// schedule's next due time (or until a commit schedules something sooner), then purges what is
/// due through the writer, a bounded batch per transaction, one `account.anonymous_purged` event
/// per account. `decide` checks each account again inside the batch, so one that linked a method
/// meanwhile is never purged. After downtime the first pass purges everything overdue. On
/// shutdown it stops between batches; a batch is one transaction, so a purge is recorded whole
/// or not at all.
public struct CleanupScheduler: Service {
    let store: AccountStore
    let clock: any SleepingClock
    let started: StartSignal
    /// Accounts per transaction: 1024 keeps a batch to about ten milliseconds of the writer
    /// (measured: smaller batches purged slower without shortening sign-ups' tail).
    let batchSize: Int
    /// After a batch that live requests shared the writer with, the scheduler pauses for this
    /// fraction of the batch's time, so the purge takes at most 1 / (1 + livePacing) of the
    /// writer while the API is busy; with no one else writing it runs flat out.
    let livePacing: Double
    let logger: Logger
    private let purges = Counter(label: "hearth_cleanup_purged_total")
    private let progress = SchedulerProgress()

    public init(
        store: AccountStore, clock: any SleepingClock, startsAfter started: StartSignal, batchSize: Int = 1024,
        livePacing: Double = 0.5, logger: Logger
    ) {
        self.livePacing = livePacing
        self.store = store
        self.clock = clock
        self.started = started
        self.batchSize = batchSize
        self.logger = logger
    }

    static let metadata = Metadata(actor: .scheduler, actorId: "anonymous-cleanup")

    public func run() async throws {
        // A shutdown (or a failed start) before the projections caught up: never purge.
        let ready = await started.waitUnlessStopped()
        guard ready else { return }
        do {
            try await cancelWhenGracefulShutdown { try await passes() }
        } catch is CancellationError {
        } catch StoreError.closed {
            // The store closed under a last batch during shutdown: nothing was lost.
        } catch {
            // The store failed (a full disk, a bad record): the daemon stops, loudly.
            logger.critical("anonymous cleanup failed", metadata: ["error": "\(error)"])
            throw error
        }
    }

    /// Purge what is due, then sleep until the next due time; until cancelled.
    func passes() async throws {
        while !Task.isCancelled {
            progress.passBegan()
            store.cleanupChanges.reset()
            let purged: Int
            let refused: Bool
            do {
                (purged, refused) = try await purgeBatches()
            } catch StoreError.notLeader, StoreError.notReplicated {
                // A cluster's follower (the leader purges), or a leader whose followers do not
                // confirm: look again later.
                progress.passFinished(sleepingUntil: clock.now() + SchedulerTiming.followerRetry)
                try await sleep(until: clock.now() + SchedulerTiming.followerRetry)
                continue
            }
            let next = try store.read { try $0.nextCleanupDue() }
            if purged > 0 {
                logger.info(
                    "anonymous accounts purged",
                    metadata: ["purged": "\(purged)", "nextDueAt": "\(next.map { Timestamp.iso8601(milliseconds: $0) } ?? "none")"])
            }
            // After a refused batch the same accounts are still due: retry in a minute, not at once.
            let wake = refused ? clock.now() + 60_000 : next
            progress.passFinished(sleepingUntil: wake)
            try await sleep(until: wake)
        }
    }

    /// Returns once the scheduler is asleep with nothing to wake it yet: every account due by
    /// the clock's now is purged (or was refused), and no commit since its last pass scheduled
    /// one sooner than it sleeps until, which it returns (`nil`: nothing scheduled). Tests wait
    /// on this instead of on real time. Cancelled, it returns what it would sleep until now.
    public func idle() async -> Int64? {
        while !Task.isCancelled {
            let (phase, passes) = progress.current
            if case .asleep(let until) = phase, !store.cleanupChanges.hasEntry(before: until ?? .max),
                until.map({ clock.now() < $0 }) ?? true
            {
                return until
            }
            await progress.pass(after: passes)
        }
        if case .asleep(let until) = progress.current.phase { return until }
        return nil
    }

    /// Purges everything due at the clock's now, a batch per transaction; returns how many.
    /// (One pass of `run`; the benchmark times it.)
    public func purgeDue() async throws -> Int {
        try await purgeBatches().purged
    }

    /// The batches of one pass, and whether it stopped at a batch `decide` refused whole.
    func purgeBatches() async throws -> (purged: Int, refused: Bool) {
        var purged = 0
        while !Task.isCancelled {
            let now = clock.now()
            let due = try store.read { try $0.accountsDueForCleanup(now: now, limit: batchSize) }
            if due.isEmpty { break }
            let began = ContinuousClock.now
            let jobsBefore = store.writeJobs
            let batch = try await purge(due)
            purged += batch
            purges.increment(by: batch)
            // Others' jobs went through the writer beside this one: let them have the time.
            if livePacing > 0, store.writeJobs - jobsBefore > 1 {
                try await Task.sleep(for: (ContinuousClock.now - began) * livePacing)
            }
            if batch == 0 {
                // Every one refused. Usually they changed since the read (linked, deleted) and
                // left the schedule; if the first is still listed, the schedule and the accounts
                // disagree (a bug): stop rather than spin on the same accounts.
                let still = try store.read { try $0.accountsDueForCleanup(now: now, limit: 1) }
                if let first = still.first, let refused = due.first, first == refused {
                    logger.error("cleanup batch refused whole", metadata: ["accounts": "\(due.count)"])
                    return (purged, true)
                }
            }
            await Task.yield()
        }
        return (purged, false)
    }

    /// One batch, one transaction; returns how many it purged. An account that stopped being
    /// due (upgraded, deleted) is refused by `decide` and stays.
    func purge(_ due: [(ProjectID, UserID)]) async throws -> Int {
        let results = try await store.executeAll(due.map { .purgeAnonymous($0.0, $0.1) }, metadata: Self.metadata)
        return results.count { if case .success(let events) = $0 { !events.isEmpty } else { false } }
    }

    /// Until `next` (forever when nothing is scheduled), or until a commit schedules an
    /// account due before it.
    func sleep(until next: Int64?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let next { group.addTask { try await clock.sleep(until: next) } }
            group.addTask { await store.cleanupChanges.waitForEntry(before: next ?? .max) }
            try await group.next()
            group.cancelAll()
        }
        try Task.checkCancellation()
    }
}
