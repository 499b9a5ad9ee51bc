import HearthDomain
import HearthLedger
import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Measurements of the layers under the store, for `hearth bench ledger`: the ceilings that
/// Hearth's own paths are reported as ratios of, measured in the same run (on shared, noisy
/// machines an absolute number moves from run to run).
public enum StoreProbes {
    /// Events per second appended straight through the LMDB wrapper, `perCommit` 300-byte
    /// events per durable commit, in a fresh environment at `path`: the ceiling for
    /// fsync-bound writes.
    public static func rawAppendRate(perCommit: Int, commits: Int, path: String) throws -> Double {
        try translatingErrors {
            let environment = try Environment(path: path)
            defer { environment.close() }
            let database: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "events")
            let value = [UInt8](repeating: 0xab, count: 300)
            var sequence: UInt64 = 0
            let start = ContinuousClock.now
            for _ in 0..<commits {
                let first = sequence
                try environment.writer.perform { txn in
                    for offset in 1...UInt64(perCommit) {
                        try txn.put(database, BigEndianUInt64(first + offset), value, options: .append)
                    }
                }
                sequence += UInt64(perCommit)
            }
            return Double(sequence) / seconds(since: start)
        }
    }

    /// Records per second in one cursor pass over `store`'s ledger, touching each record's
    /// bytes (the read ceiling for a rebuild), or also decoding each into an event.
    public static func scanRate(_ store: AccountStore, decoding: Bool = false) throws -> Double {
        var scanned: UInt64 = 0
        var checksum = 0
        let start = ContinuousClock.now
        try translatingErrors {
            try store.environment.read { txn in
                let keys = Ledger.KeyCache()
                try txn.forEach(store.ledger.events) { _, record in
                    checksum &+= record.count &+ Int(record[record.count - 1])
                    if decoding { checksum &+= Int(try store.ledger.decode(record, in: txn, cache: keys).streamVersion) }
                    scanned += 1
                    return .continue
                }
            }
        }
        let rate = Double(scanned) / seconds(since: start)
        precondition(checksum != 0 || scanned == 0)
        return rate
    }

    /// Writes `store`'s ledger again into `plain`, an empty store, as Hearth wrote it before
    /// per-account keys: format 1 records, personal data and client addresses in plain text; the
    /// same events, streams, times and actors. The rebuild of a sealed ledger is measured against
    /// this one's (issue 31: the rate without sealing, in the same run). Returns the events written.
    public static func copyBeforeSealing(_ store: AccountStore, into plain: AccountStore) throws -> UInt64 {
        let head = try store.ledgerHead().sequence
        var copied: UInt64 = 0
        try translatingErrors {
            while copied < head {
                let envelopes = try store.environment.read { txn in
                    var chunk: [EventEnvelope] = []
                    try store.ledger.forEachEvent(from: copied + 1, in: txn) { envelope in
                        chunk.append(envelope)
                        return chunk.count < 10_000 ? .continue : .stop
                    }
                    return chunk
                }
                try plain.environment.writer.perform { txn in
                    for envelope in envelopes {
                        try plain.ledger.appendBeforeSealing(
                            [envelope.payload], to: envelope.stream, metadata: envelope.metadata, at: envelope.recordedAt, in: txn)
                    }
                }
                copied += UInt64(envelopes.count)
            }
        }
        return copied
    }

    /// The writer's CPU seconds per job without the commit: `jobs` jobs run one after another in
    /// one write transaction, as a batch runs them, then rolled back, so nothing is kept.
    /// `job(index)` gives each job's metadata and body. What a change to the write path costs
    /// each job shows here without the fsync's latency, which on a shared host moves the durable
    /// rate by several percent from run to run. The writer thread's CPU time, not the wall
    /// clock's: a thread the host preempts mid-batch (another tenant, the kernel's writeback)
    /// is not charged for the wait.
    public static func jobSeconds(
        _ store: AccountStore, jobs: Int, _ job: @escaping (Int) -> (Metadata, (StoreTransaction) throws -> Void)
    ) throws -> Double {
        struct RolledBack: Error { var seconds: Double }
        do {
            try translatingErrors {
                try store.environment.writer.perform { txn in
                    let start = threadCPUSeconds()
                    for index in 0..<jobs {
                        let (metadata, body) = job(index)
                        _ = try store.job(txn, metadata, body)
                    }
                    throw RolledBack(seconds: threadCPUSeconds() - start)
                }
            }
        } catch let rolledBack as RolledBack {
            return rolledBack.seconds / Double(jobs)
        }
        preconditionFailure("the probe's transaction always rolls back")
    }

    /// The accounts' keys (`ledger.keys`): live, destroyed, and the bytes of the table's pages.
    public static func streamKeys(_ store: AccountStore) throws -> (live: Int, destroyed: Int, bytes: Int) {
        let counts = try translatingErrors { try store.environment.read { try store.ledger.keys.counts(in: $0) } }
        return (counts.live, counts.destroyed, counts.bytes)
    }

    /// The writer's seconds so far in committed batches: running their jobs, and committing them
    /// (writing the pages, the fsyncs).
    public static func writerSeconds(_ store: AccountStore) -> (runningJobs: Double, committing: Double) {
        let statistics = store.environment.writer.statistics
        return (seconds(statistics.runningJobs), seconds(statistics.committing))
    }

    /// Write jobs and the batches (transactions, fsyncs) they were grouped into so far.
    public static func writerCounts(_ store: AccountStore) -> (jobs: Int, batches: Int) {
        let statistics = store.environment.writer.statistics
        return (statistics.jobs, statistics.batches)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double { seconds(ContinuousClock.now - start) }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}

/// The calling thread's CPU time, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
