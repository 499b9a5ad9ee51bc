import Crypto
import HearthLedger
import LMDB

/// Catch-up, rebuild and digest. Rebuild is catch-up from an emptied state, so the code
/// that keeps projections current after a crash or upgrade is the code a rebuild exercises.
public struct ProjectionMaintenance: Sendable {
    public let environment: Environment
    public let ledger: Ledger
    public let projections: Projections
    /// Events per chunk, the unit of the catch-up pipeline and of its write transactions (the
    /// checkpoint commits with each). Small, so a chunk's events and accounts stay in the CPU
    /// caches between stages, and memory stays flat; a crash loses a few chunks of work.
    public var chunkSize = 10_000

    public init(environment: Environment, ledger: Ledger, projections: Projections) {
        self.environment = environment
        self.ledger = ledger
        self.projections = projections
    }

    /// Whether the stored projections were built by another format and must be rebuilt.
    public func needsRebuild() throws -> Bool {
        try environment.read { txn in
            try projections.storedFormat(in: txn) != Projections.formatVersion
        }
    }

    /// Stamps the current format on the projections of a store with no events yet. Otherwise
    /// projections built event by event from the first, never by a catch-up, would carry no
    /// format, be taken for another format's at the next open, and be rebuilt from scratch.
    public func stampFormatIfEmpty() throws {
        let unstamped = try environment.read { txn in
            try projections.storedFormat(in: txn) == nil && ledger.head(in: txn).sequence == 0
        }
        if unstamped { try environment.writer.perform { txn in try projections.reset(in: txn) } }
    }

    /// Applies every event after the checkpoint. `progress(applied, total)` runs as each chunk
    /// commits; `shouldStop` is asked before each chunk is folded, and a yes ends the catch-up
    /// with `ProjectionError.interrupted`, the chunks before it committed (the next catch-up
    /// goes on from there).
    ///
    /// A pipeline over chunks, so a rebuild keeps both cores busy: two threads decode the
    /// next chunks (`Lookahead`), this thread folds one (`ChunkFolder`), and the writer thread
    /// stores the ones before it, committing while later ones are folded. Nothing else may
    /// write projections meanwhile (the data-directory lock, or start-up before serving,
    /// ensures it); each chunk's write checks that the checkpoint is the one it follows.
    @discardableResult
    public func catchUp(
        progress: (_ applied: UInt64, _ total: UInt64) -> Void = { _, _ in }, shouldStop: () -> Bool = { false }
    ) throws -> UInt64 {
        if try needsRebuild() {
            try environment.writer.perform { txn in try projections.reset(in: txn) }
        }
        let (start, head) = try environment.read { txn in
            (try projections.checkpoint(in: txn), try ledger.head(in: txn).sequence)
        }
        guard head > start else { return 0 }
        let total = head - start
        let size = UInt64(max(1, chunkSize))
        let chunks = Int((total + size - 1) / size)
        // Chunk k holds the events after start + k * size; lane l decodes chunks l, l + lanes, …
        let lanes = min(Self.decodingThreads, chunks)
        let decoding = (0..<lanes).map { lane in
            // The fold is the critical path: decoding, with chunks in hand, yields the CPU to it.
            Lookahead(count: (chunks - lane + lanes - 1) / lanes, depth: 2, niceness: 10) { [self] index in
                let first = start + UInt64(index * lanes + lane) * size + 1
                return try decodeChunk(first...min(first + size - 1, head))
            }
        }
        let folder = ChunkFolder(environment: environment, projections: projections)
        var applied: UInt64 = 0
        var checkpoint = start
        var writing: [Pending<Int>] = []
        // On an error, nothing may still be running when the caller closes the environment.
        defer {
            for lane in decoding { lane.stop() }
            for write in writing { write.wait() }
        }
        func settleOldestWrite() throws {
            applied += UInt64(try writing.removeFirst().value())
            progress(min(applied, total), total)
        }
        for chunk in 0..<chunks {
            if shouldStop() {
                while !writing.isEmpty { try settleOldestWrite() }
                throw ProjectionError.interrupted
            }
            let events = try decoding[chunk % lanes].next()
            guard !events.isEmpty else { continue }  // only a gap in the ledger's sequence
            // The folder reads its last chunks' accounts from memory and older ones from a
            // snapshot of the projections, so those older chunks must be committed.
            while writing.count > ChunkFolder.carriedChunks { try settleOldestWrite() }
            let folded = try folder.fold(consume events)
            writing.append(write(folded, after: checkpoint))
            checkpoint = folded.lastSequence
        }
        while !writing.isEmpty { try settleOldestWrite() }
        return applied
    }

    /// Threads that decode ahead of the fold: two keep up with it on two cores.
    static let decodingThreads = 2

    /// Queues a folded chunk's write on the writer thread; delivers its event count once committed.
    private func write(_ chunk: FoldedChunk, after checkpoint: UInt64) -> Pending<Int> {
        let written = Pending<Int>()
        environment.writer.enqueue(
            { [projections] txn in
                guard try projections.checkpoint(in: txn) == checkpoint else { throw ProjectionError.concurrentWrite }
                try projections.writer(txn).store(chunk)
                return chunk.eventCount
            }, completion: written.deliver)
        return written
    }

    /// The events of `sequences`, decoded from a read snapshot, returned newest first: the fold
    /// takes them off the end, in sequence order, moving each out of the array instead of
    /// copying it. They are decoded oldest first, so that a stream's first record, which names
    /// where its key is, comes before the others of its run (one key lookup per run), and
    /// stored from the end of the array back, so none is moved again (reversing the array
    /// copied every event: a retain per field).
    private func decodeChunk(_ sequences: ClosedRange<UInt64>) throws -> [RecordedEvent] {
        let capacity = sequences.count
        var streams = RecordFormat.StreamCache()
        return try [RecordedEvent](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            var next = capacity
            do {
                try environment.read { txn in
                    try ledger.forEachRecord(from: sequences.lowerBound, in: txn) { sequence, record in
                        guard sequence <= sequences.upperBound else { return .stop }
                        let event = try ledger.decodeRecordedEvent(record, streams: &streams, in: txn)
                        next -= 1
                        (base + next).initialize(to: event)
                        return sequence >= sequences.upperBound || next == 0 ? .stop : .continue
                    }
                }
            } catch {
                (base + next).deinitialize(count: capacity - next)
                throw error
            }
            // A gap in the ledger's sequence left room at the front: the events move down to it.
            if next > 0 { base.moveInitialize(from: base + next, count: capacity - next) }
            initialized = capacity - next
        }
    }

    /// Folds, inside `txn`, the events after the checkpoint, one by one on the writer thread:
    /// what a write needs before it decides when a follower's fold (a catch-up behind its
    /// ledger) has not reached the head, as after a promotion. Returns the earliest cleanup due
    /// time it scheduled, for the caller to announce once it commits.
    public func foldTail(in txn: WriteTransaction) throws -> Int64? {
        let checkpoint = try projections.checkpoint(in: txn)
        guard try ledger.head(in: txn).sequence > checkpoint else { return nil }
        let writer = projections.writer(txn)
        var streams = RecordFormat.StreamCache()
        try ledger.forEachRecord(from: checkpoint + 1, in: txn) { _, record in
            try writer.apply(try ledger.decodeRecordedEvent(record, streams: &streams, in: txn))
            return .continue
        }
        try writer.flush()
        return writer.earliestScheduled
    }

    /// Drops every projection and refolds the whole ledger.
    @discardableResult
    public func rebuild(progress: (_ applied: UInt64, _ total: UInt64) -> Void = { _, _ in }) throws -> UInt64 {
        try environment.writer.perform { txn in try projections.reset(in: txn) }
        return try catchUp(progress: progress)
    }

    /// SHA-256 over every projection table's keys and values, in table and key order, and the
    /// checkpoint: equal digests mean byte-identical projections.
    public func digest() throws -> String {
        try environment.read { txn in
            var hasher = SHA256()
            for table in projections.tables { try Self.feed(table, in: txn, to: &hasher) }
            BigEndianUInt64(try projections.checkpoint(in: txn)).withEncodedBytes { Self.feed($0, to: &hasher) }
            return hex(hasher.finalize())
        }
    }

    /// Each table's SHA-256 (its name, keys and values, as `digest` feeds them) and the
    /// checkpoint: which table two data directories' projections differ in.
    public func tableDigests() throws -> (tables: [(name: String, digest: String)], checkpoint: UInt64) {
        try environment.read { txn in
            let tables = try projections.tables.map { table in
                var hasher = SHA256()
                try Self.feed(table, in: txn, to: &hasher)
                return (table.name, hex(hasher.finalize()))
            }
            return (tables, try projections.checkpoint(in: txn))
        }
    }

    private static func feed(_ table: Projections.Table, in txn: ReadTransaction, to hasher: inout SHA256) throws {
        table.name.withEncodedBytes { feed($0, to: &hasher) }
        try txn.forEach(table) { key, value in
            feed(key, to: &hasher)
            feed(value, to: &hasher)
            return .continue
        }
    }

    private static func feed(_ bytes: UnsafeRawBufferPointer, to hasher: inout SHA256) {
        var length = UInt64(bytes.count).bigEndian
        withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
        hasher.update(bufferPointer: bytes)
    }
}

public enum ProjectionError: Error, Equatable, CustomStringConvertible {
    case concurrentWrite
    case interrupted

    public var description: String {
        switch self {
        case .concurrentWrite: "the projections changed while catching up: another process is writing this data directory"
        case .interrupted: "the catch-up was stopped before the projections reached the ledger's head"
        }
    }
}
