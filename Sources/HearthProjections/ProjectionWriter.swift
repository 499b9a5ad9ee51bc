import HearthDomain
import HearthLedger
import LMDB

/// Folds events into the projections within one write transaction.
///
/// Account events go through an `AccountFold`: its cached accounts are written back once,
/// sorted by key, at `flush()`, and the index changes they imply are written through as they
/// happen. The live writer flushes at the end of each write job, and in between serves the
/// job's reads of accounts (`account(_:in:)`, through `WriteState`). A catch-up folds its
/// chunks off the writer thread (`ChunkFolder`) and stores each with `store(_:)`; both reach
/// the same bytes, which the digest proves.
public final class ProjectionWriter {
    public let projections: Projections
    public let txn: WriteTransaction
    private let fold: AccountFold
    private var ops: [IndexOp] = []
    private var configs: [ProjectID: ProjectConfig] = [:]
    private var lastSequence: UInt64?
    private var encoder = ByteWriter(capacity: 512)
    /// The earliest cleanup due time this writer added to the schedule: after the commit, the
    /// scheduler may have to wake sooner than it planned.
    public private(set) var earliestScheduled: Int64?

    init(projections: Projections, txn: WriteTransaction) {
        self.projections = projections
        self.txn = txn
        fold = AccountFold { key in
            try projections.reader(txn).account(key.uid, in: key.project)
        }
    }

    public func apply(_ envelope: EventEnvelope) throws {
        try apply(RecordedEvent(envelope))
    }

    /// Folds one event into every projection.
    public func apply(_ event: RecordedEvent) throws {
        if case .account(let project, let uid) = event.stream {
            // Emptied even if a write fails, so a job that goes on after the error replays nothing.
            defer { ops.removeAll(keepingCapacity: true) }
            try fold.apply(event.payload, at: event.recordedAt, to: AccountKey(project: project, uid: uid), ops: &ops)
            for op in ops { try perform(op) }
        } else {
            try applyUnfolded(event)
        }
        lastSequence = event.sequence
    }

    /// Stores a chunk a `ChunkFolder` folded: the same writes, in the same order, as applying
    /// its events one by one and flushing.
    func store(_ chunk: FoldedChunk) throws {
        var others = chunk.unfolded[...]
        for (position, op) in chunk.ops.enumerated() {
            while let next = others.first, next.position == position {
                try applyUnfolded(next.event)
                others = others.dropFirst()
            }
            try perform(op)
        }
        for next in others { try applyUnfolded(next.event) }
        try store(chunk.accounts)
        try projections.setCheckpoint(chunk.lastSequence, in: txn)
    }

    /// Writes the accounts events changed, in key order, and the checkpoint.
    public func flush() throws {
        try store(fold.finish())
        if let lastSequence { try projections.setCheckpoint(lastSequence, in: txn) }
    }

    private func store(_ accounts: FoldedAccounts) throws {
        for op in accounts.listingOps { try perform(op) }
        try store(accounts.tallies)
        try accounts.forEachChanged { key, account in
            if let account {
                encoder.removeAll()
                account.encode(to: &encoder)
                try txn.putBytes(projections.accounts, key, encoder.bytes)
            } else {
                try txn.delete(projections.accounts, key)
            }
        }
    }

    /// Adds a fold's count changes to the stored counts, in key order; a count of 0 is no entry.
    private func store(_ tallies: [Tally: Int64]) throws {
        for (key, delta) in tallies.map({ (Keys.tally($0.key), $0.value) }).sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            let count = try txn.withValue(projections.counts, forKey: key) { bytes in
                try bytes.map { Int64(bitPattern: try BigEndianUInt64(decoding: $0).value) } ?? 0
            }
            let updated = max(0, count + delta)
            if updated == 0 {
                try txn.delete(projections.counts, key)
            } else {
                try txn.put(projections.counts, key, withUnsafeBytes(of: UInt64(updated).bigEndian) { Array($0) })
            }
        }
    }

    /// The account as the events applied so far left it (not yet flushed), else as stored.
    public func account(_ uid: UserID, in project: ProjectID) throws -> Account? {
        try fold.account(AccountKey(project: project, uid: uid))
    }

    /// Project and code events: few, so they read and write the transaction directly.
    private func applyUnfolded(_ event: RecordedEvent) throws {
        switch event.stream {
        case .account:
            preconditionFailure("account events go through the account fold")
        case .project(let project):
            let before = try config(project)
            let after = Evolve.project(before, event.payload)
            configs[project] = after
            try txn.put(projections.projects, Keys.project(project), after.binaryEncoded)
            if after.anonymousCleanup && !before.anonymousCleanup {
                try scheduleExistingAnonymousAccounts(
                    project,
                    CleanupSchedule(
                        dueAt: event.recordedAt + after.anonymousCleanupDelay, rule: .existedWhenCleanupTurnedOn,
                        since: event.recordedAt))
            }
        case .oobCode(let project, let codeHash):
            let key = Keys.oobCode(project, codeHash)
            let before = try projections.reader(txn).oobCode(codeHash, in: project)
            switch event.payload {
            case .oobCodeIssued(let issued):
                if let uid = issued.uid { try txn.put(projections.accountCodes, Keys.accountCode(project, uid, codeHash), [UInt8]()) }
                try txn.put(projections.codeExpiry, Keys.codeExpiry(issued.expiresAt, project, codeHash), [UInt8]())
            case .oobCodeConsumed, .oobCodeExpired:
                if let before {
                    if let uid = before.uid { try txn.delete(projections.accountCodes, Keys.accountCode(project, uid, codeHash)) }
                    try txn.delete(projections.codeExpiry, Keys.codeExpiry(before.expiresAt, project, codeHash))
                }
            default: break
            }
            if let after = Evolve.oobCode(before, event.payload, at: event.recordedAt) {
                try txn.put(projections.oobCodes, key, after.binaryEncoded)
            } else {
                try txn.delete(projections.oobCodes, key)
            }
        case .cluster(.terms):
            if case .termStarted(let started) = event.payload { try projections.setTerm(started.term, in: txn) }
        case .cluster(.signingKeys):
            // Read from its stream (a handful of events), not folded.
            break
        }
    }

    private func perform(_ op: IndexOp) throws {
        switch op {
        case .put(let table, let key, let value): try txn.put(self.table(table), key, value)
        case .delete(let table, let key): try txn.delete(self.table(table), key)
        case .anonymous(let key, let since): try updateCleanup(key, anonymousSince: since)
        case .purged(let project, let day):
            let key = Keys.purgeDay(project, day: day)
            let count = try txn.withValue(projections.cleanupPurges, forKey: key) { bytes in
                try bytes.map { try BigEndianUInt64(decoding: $0).value } ?? 0
            }
            try txn.put(projections.cleanupPurges, key, withUnsafeBytes(of: (count + 1).bigEndian) { Array($0) })
        case .endCodes(let account):
            let prefix = Keys.accountCodes(account.project, account.uid)
            var codes: [[UInt8]] = []
            try txn.forEach(projections.accountCodes, prefix: prefix) { key, _ in
                codes.append(Array(key))
                return .continue
            }
            for key in codes {
                let codeHash = String(decoding: key[prefix.count...], as: UTF8.self)
                if let code = try projections.reader(txn).oobCode(codeHash, in: account.project) {
                    try txn.delete(projections.codeExpiry, Keys.codeExpiry(code.expiresAt, account.project, codeHash))
                }
                try txn.delete(projections.oobCodes, Keys.oobCode(account.project, codeHash))
                try txn.delete(projections.accountCodes, key)
            }
        }
    }

    private func table(_ table: IndexTable) -> Projections.Table {
        switch table {
        case .emails: projections.emails
        case .phones: projections.phones
        case .federatedIds: projections.federatedIds
        case .refreshTokens: projections.refreshTokens
        case .accountListings: projections.accountListings
        }
    }

    private func config(_ project: ProjectID) throws -> ProjectConfig {
        if let cached = configs[project] { return cached }
        let stored = try projections.reader(txn).config(of: project)
        configs[project] = stored
        return stored
    }

    /// Keeps `anonymousAccounts` and the cleanup schedule in step with the account: created
    /// anonymous -> listed (and scheduled if cleanup is on); upgraded or gone -> unlisted.
    private func updateCleanup(_ key: AccountKey, anonymousSince createdAt: Int64?) throws {
        let bytes = Keys.account(key.project, key.uid)
        if let createdAt {
            let config = try config(key.project)
            if config.anonymousCleanup {
                let schedule = CleanupSchedule(
                    dueAt: createdAt + config.anonymousCleanupDelay, rule: .createdWhileCleanupOn, since: createdAt)
                try txn.put(projections.anonymousAccounts, bytes, schedule.binaryEncoded)
                try txn.put(projections.cleanupSchedule, Keys.cleanup(key.project, dueAt: schedule.dueAt, key.uid), [])
                noteScheduled(schedule.dueAt)
            } else {
                try txn.put(projections.anonymousAccounts, bytes, [])
            }
        } else {
            if let schedule = try projections.reader(txn).cleanupSchedule(key.uid, in: key.project) {
                try txn.delete(projections.cleanupSchedule, Keys.cleanup(key.project, dueAt: schedule.dueAt, key.uid))
            }
            try txn.delete(projections.anonymousAccounts, bytes)
        }
    }

    /// Cleanup was just enabled: anonymous accounts not yet scheduled become due a period later.
    /// Accounts already scheduled (cleanup was on before) keep their earlier date.
    private func scheduleExistingAnonymousAccounts(_ project: ProjectID, _ schedule: CleanupSchedule) throws {
        let value = schedule.binaryEncoded
        let prefix = Keys.project(project)
        var unscheduled: [[UInt8]] = []
        try txn.forEach(projections.anonymousAccounts, prefix: prefix) { key, value in
            if value.isEmpty { unscheduled.append(Array(key)) }
            return .continue
        }
        for key in unscheduled {
            guard let uid = UserID(String(decoding: key[prefix.count...], as: UTF8.self)) else { continue }
            try txn.put(projections.anonymousAccounts, key, value)
            try txn.put(projections.cleanupSchedule, Keys.cleanup(project, dueAt: schedule.dueAt, uid), [])
        }
        if !unscheduled.isEmpty { noteScheduled(schedule.dueAt) }
    }

    private func noteScheduled(_ dueAt: Int64) {
        earliestScheduled = min(earliestScheduled ?? dueAt, dueAt)
    }
}
