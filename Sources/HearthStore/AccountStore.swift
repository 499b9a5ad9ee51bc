import Foundation
import HearthDomain
import HearthLedger
import HearthProjections
import LMDB

/// The event-sourced account store: the write path (command -> decide -> append -> project, in
/// one writer transaction, many commands per group commit) in one place, sealed. Its
/// callers see commands, `StoreReader`, `StoreTransaction`, `StoredEvent` and `StoreError`;
/// the LMDB environment, the ledger and the projections stay inside.
///
/// `execute` sends a command to the environment's writer thread, which, inside the batch's
/// one transaction, reads state from the projections, runs the pure `decide`, appends the
/// events to the ledger and folds them into the projections. A refused command (an
/// `AuthError`, a wrong expected version) writes nothing and fails alone; its batch commits.
public final class AccountStore: Sendable {
    let environment: Environment
    let ledger: Ledger
    let projections: Projections
    /// The data directory's lock, for a writer; released when the store closes.
    private let lock: DataDirectoryLock?
    public let clock: any WallClock
    public let directory: DataDirectory
    /// Announces, after each commit, an account that became due for cleanup (the scheduler
    /// waits on it).
    public let cleanupChanges = CleanupScheduleChanges()
    /// Whether writes are failing on a full disk.
    public let writeHealth: WriteHealth
    /// Whether this node may write: always, unless it runs in a cluster (the elector sets it).
    public let writeAuthority = WriteAuthority()
    /// In a cluster, which followers must hold a write before it is acknowledged (the leader's
    /// elector sets it); no one's otherwise.
    public let synchronousCommit = SynchronousCommit()
    /// Wakes a leader's replication long polls when a write commits.
    public let ledgerGrowth = LedgerGrowth()
    /// A follower's projections, folded behind its ledger.
    let followerFold: FollowerFold

    public struct Options: Sendable {
        public var clock: any WallClock = SystemClock()
        /// Open for reading only, beside a daemon that may be writing (the audit tools).
        public var readOnly = false
        /// Commands submitted together share one transaction and one fsync, up to this many.
        public var maxBatchSize = EnvironmentOptions().maxBatchSize
        /// Writes records as Hearth did before sealing personal data: the benchmark's baseline.
        package var writesBeforeSealing = false

        public init() {}

        public static var readOnly: Options {
            var options = Options()
            options.readOnly = true
            return options
        }
    }

    /// Opens the store in `directory` (through `DataDirectory.open` or `openForReading`). A writable store first brings the projections up to the
    /// ledger's head (normally nothing to do: they commit together) unless `catchUp` is false,
    /// for the daemon, which catches up inside its service group where a signal can stop it.
    init(directory: DataDirectory, options: Options, lock: DataDirectoryLock?, catchUp: Bool) throws {
        if options.readOnly && !directory.holdsLedger { throw StoreError.noLedger(directory: directory.path) }
        var environmentOptions = EnvironmentOptions()
        environmentOptions.readOnly = options.readOnly
        environmentOptions.maxBatchSize = options.maxBatchSize
        let environment = try translatingErrors { try Environment(path: directory.path, options: environmentOptions) }
        self.environment = environment
        do {
            (ledger, projections) = try translatingErrors {
                let ledgerKey = try LedgerKeyFile.load(directory, environment: environment, create: !options.readOnly)
                var ledger = try Ledger.open(environment, ledgerKey: ledgerKey)
                ledger.writesBeforeSealing = options.writesBeforeSealing
                return (ledger, try Projections.open(environment))
            }
        } catch {
            environment.close()
            throw error
        }
        followerFold = FollowerFold(ProjectionMaintenance(environment: environment, ledger: ledger, projections: projections))
        clock = options.clock
        let clock = options.clock
        writeHealth = WriteHealth(clock: { clock.now() })
        self.directory = directory
        self.lock = lock
        if !options.readOnly {
            // A leader's replication long polls are woken on the writer thread as a commit lands,
            // ahead of the batch's jobs: at capacity those are hundreds of submitters' tasks,
            // each resumed before a follower's request would otherwise hear of the commit.
            let ledger = ledger
            environment.writer.observeCommits { [weak environment, ledgerGrowth] _ in
                guard let head = try? environment?.read({ try ledger.head(in: $0).sequence }) else { return }
                ledgerGrowth.grew(to: head)
            }
            do {
                try maintenance.moveLegacyStreamKeys()
                try maintenance.stampFormatIfEmpty()
                if catchUp { try maintenance.catchUp() }
            } catch {
                environment.close()
                throw error
            }
        }
    }

    /// Catch-up, rebuild and digest of the projections.
    public var maintenance: StoreMaintenance { StoreMaintenance(store: self) }

    /// The audit queries: replay, history, as-of, verify.
    public var audit: StoreAudit { StoreAudit(store: self) }

    /// Closes the environment once the writer's last batch committed; later writes fail with
    /// `StoreError.closed`. Safe to call more than once, from any thread.
    public func close() {
        followerFold.stop()
        environment.close()
        lock?.release()
    }

    /// Decides, appends and projects one command; returns the events it recorded.
    @discardableResult
    public func execute(
        _ command: Command, expecting expected: ExpectedVersion = .any, metadata: Metadata
    ) async throws -> [StoredEvent] {
        try await writing {
            try await environment.writer.submit { [self] txn in
                try job(txn, metadata) { try $0.execute(command, expecting: expected) }
            }
        }
    }

    /// `execute` for synchronous callers (tools, tests); blocks the calling thread.
    @discardableResult
    public func executeAndWait(
        _ command: Command, expecting expected: ExpectedVersion = .any, metadata: Metadata
    ) throws -> [StoredEvent] {
        try writing {
            try environment.writer.perform { [self] txn in
                try job(txn, metadata) { try $0.execute(command, expecting: expected) }
            }
        }
    }

    /// Runs many commands in one transaction (imports, bulk tools). Each refused command fails
    /// alone, with its error in the result; the others commit together.
    public func executeAll(_ commands: [Command], metadata: Metadata) async throws -> [Result<[StoredEvent], any Error>] {
        try await writing {
            try await environment.writer.submit { [self] txn in
                try job(txn, metadata) { transaction in
                    try commands.map { command in
                        let writes = txn.writeCount
                        do {
                            return .success(try transaction.execute(command))
                        } catch {
                            // Only a command that wrote nothing may fail alone inside a shared
                            // transaction; anything else fails the whole job, which the writer rolls back.
                            if txn.writeCount != writes { throw error }
                            return .failure(StoreError(translating: error) ?? error)
                        }
                    }
                }
            }
        }
    }

    /// Runs `body` on the writer thread inside one transaction: it reads state and executes
    /// commands that may span several streams (consume a code, then sign in). All or nothing:
    /// if `body` throws after a command wrote, the writer rolls the whole job back.
    public func transaction<R: Sendable>(
        metadata: Metadata, _ body: @escaping @Sendable (StoreTransaction) throws -> R
    ) async throws -> R {
        try await writing { try await environment.writer.submit { [self] txn in try job(txn, metadata, body) } }
    }

    /// A write, its errors in the store's terms, what it says of the disk (`writeHealth`), and
    /// whether it may be acknowledged: once the synchronous followers hold it
    /// (`synchronousCommit`), and while this node still holds the right to write (`writeAuthority`).
    func writing<R>(_ body: () async throws -> Committed<R>) async throws -> R {
        do {
            let committed = try await translatingErrors(body)
            writeHealth.record(diskFull: false)
            announce(committed)
            try await synchronousCommit.acknowledge(committed.head)
            try writeAuthority.check()
            return committed.result
        } catch StoreError.diskFull {
            writeHealth.record(diskFull: true)
            throw StoreError.diskFull
        }
    }

    /// `writing` for the tools, which never run where followers must confirm.
    private func writing<R>(_ body: () throws -> Committed<R>) throws -> R {
        do {
            let committed = try translatingErrors(body)
            writeHealth.record(diskFull: false)
            announce(committed)
            guard synchronousCommit.requirement == .none else { throw StoreError.notReplicated }
            try writeAuthority.check()
            return committed.result
        } catch StoreError.diskFull {
            writeHealth.record(diskFull: true)
            throw StoreError.diskFull
        }
    }

    /// A probe of the writer (readiness, the systemd watchdog): an empty job, committed in turn
    /// with the others (nothing is written, so it costs no fsync). Throws what a write would, or
    /// `StoreError.writerStalled` when it has not committed within `deadline`.
    public func probeWriter(within deadline: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await translatingErrors { _ = try await self.environment.writer.submit { _ in () } } }
            group.addTask {
                try await Task.sleep(for: deadline)
                throw StoreError.writerStalled
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// One write job: one instant for all its events (read once, never before the ledger's
    /// head), and one projection writer, which serves the job's reads of accounts and writes
    /// each account it changed back once, at the end.
    func job<R>(
        _ txn: WriteTransaction, _ metadata: Metadata, startingTerm: UInt64? = nil, _ body: (StoreTransaction) throws -> R
    ) throws -> Committed<R> {
        // A job queued before this node lost the right to write writes nothing; nor does one
        // while an earlier write waits unconfirmed past its timeout, nor one of a term whose
        // start is not yet recorded (read in this transaction, so never ahead of its commit).
        try writeAuthority.check(term: startingTerm)
        if let term = writeAuthority.begunTerm, startingTerm != term, try projections.term(in: txn) != term {
            throw StoreError.notLeader(leader: nil)
        }
        try synchronousCommit.checkAccepting()
        // A node that followed until now may hold records its projections have not folded.
        let tailDue = try ProjectionMaintenance(environment: environment, ledger: ledger, projections: projections).foldTail(in: txn)
        let now = max(clock.now(), try ledger.head(in: txn).recordedAt)
        let writer = projections.writer(txn)
        let result = try body(
            StoreTransaction(ledger: ledger, writer: writer, keys: StreamKeys.Cache(), metadata: metadata, now: now))
        try writer.flush()
        let due = [tailDue, writer.earliestScheduled].compactMap { $0 }.min()
        return Committed(result: result, earliestScheduled: due, head: try ledger.head(in: txn).sequence)
    }

    /// A job's result, the earliest cleanup due time it scheduled, and the ledger's head after
    /// it (what followers must hold before it is acknowledged; what it read, too).
    struct Committed<R> {
        var result: R
        var earliestScheduled: Int64?
        var head: UInt64
    }

    /// Called once the job committed: only then may the scheduler read what it scheduled.
    private func announce<R>(_ committed: Committed<R>) {
        if let due = committed.earliestScheduled { cleanupChanges.announce(due) }
    }

    /// Write jobs the writer has run so far, everyone's: a caller compares two readings to learn
    /// whether others wrote meanwhile (the cleanup scheduler yields to them).
    public var writeJobs: Int { environment.writer.statistics.jobs }

    /// The ledger's last sequence number, hash and time.
    public func ledgerHead() throws -> LedgerHead {
        try translatingErrors { try environment.read { LedgerHead(try ledger.head(in: $0)) } }
    }

    /// `read` for a query that scans (a status over the whole cleanup schedule): on a thread of
    /// its own, so the event loops that serve requests never wait for it.
    public func scan<R: Sendable>(_ body: @escaping @Sendable (StoreReader) throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { [self] in continuation.resume(with: Result { try read(body) }) }
        }
    }

    /// Runs `body` on a read snapshot of the projections.
    public func read<R>(_ body: (StoreReader) throws -> R) throws -> R {
        try translatingErrors { try environment.read { txn in try body(StoreReader(projectionReader: projections.reader(txn))) } }
    }
}

extension AccountStore.Committed: Sendable where R: Sendable {}
