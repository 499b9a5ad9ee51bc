import Crypto
import Dispatch
import HearthLedger
import LMDB

/// Catch-up, rebuild and digest. Rebuild is catch-up from an emptied state, so the code
/// that keeps projections current after a crash or upgrade is the code a rebuild exercises.
public struct ProjectionMaintenance: Sendable {
    public let environment: Environment
    public let ledger: Ledger
    public let projections: Projections
    /// Events per write transaction while catching up. Bounded so memory stays flat and a
    /// crash loses at most one chunk of work (the checkpoint commits with it).
    public var chunkSize = 100_000

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

    /// Applies every event after the checkpoint. `progress(applied, total)` runs after each chunk.
    ///
    /// Nothing else may write projections meanwhile (the data-directory lock, or start-up
    /// before serving, ensures it); each chunk's job checks the checkpoint did not move.
    @discardableResult
    public func catchUp(progress: (_ applied: UInt64, _ total: UInt64) -> Void = { _, _ in }) throws -> UInt64 {
        if try needsRebuild() {
            try environment.writer.perform { txn in try projections.reset(in: txn) }
        }
        let (start, head) = try environment.read { txn in
            (try projections.checkpoint(in: txn), try ledger.head(in: txn).sequence)
        }
        guard head > start else { return 0 }
        let total = head - start
        var applied: UInt64 = 0
        var checkpoint = start
        var chunk = try decodeChunk(after: start)
        while !chunk.isEmpty {
            // Decode the next chunk on the other core while the writer folds this one.
            let next = Prefetch { [self, after = chunk[chunk.count - 1].sequence] in try decodeChunk(after: after) }
            defer { next.wait() }
            try environment.writer.perform { [projections, chunk, checkpoint] txn in
                guard try projections.checkpoint(in: txn) == checkpoint else { throw ProjectionError.concurrentWrite }
                let writer = projections.writer(txn)
                for event in chunk { try writer.apply(event) }
                try writer.flush()
            }
            checkpoint = chunk[chunk.count - 1].sequence
            applied += UInt64(chunk.count)
            progress(min(applied, total), total)
            chunk = try next.value()
        }
        return applied
    }

    /// Up to `chunkSize` events after `sequence`, decoded from a read snapshot.
    private func decodeChunk(after sequence: UInt64) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        events.reserveCapacity(chunkSize)
        try environment.read { txn in
            try ledger.forEachRecord(from: sequence + 1, in: txn) { _, record in
                events.append(try RecordFormat.decodeRecordedEvent(record))
                return events.count == chunkSize ? .stop : .continue
            }
        }
        return events
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
            func feed(_ bytes: UnsafeRawBufferPointer) {
                var length = UInt64(bytes.count).bigEndian
                withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
                hasher.update(bufferPointer: bytes)
            }
            for table in projections.tables {
                table.name.withEncodedBytes { feed($0) }
                try txn.forEach(table) { key, value in
                    feed(key)
                    feed(value)
                    return .continue
                }
            }
            BigEndianUInt64(try projections.checkpoint(in: txn)).withEncodedBytes { feed($0) }
            return hasher.finalize().map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
        }
    }
}

public enum ProjectionError: Error, CustomStringConvertible {
    case concurrentWrite

    public var description: String {
        "the projections changed while catching up: another process is writing this data directory"
    }
}

/// Work started on a global queue now, its result collected later.
private final class Prefetch<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    init(_ work: @escaping @Sendable () throws -> T) {
        DispatchQueue.global().async {
            self.result = Result { try work() }
            self.done.signal()
        }
    }

    /// Waits for the work to finish; may be called any number of times.
    func wait() {
        done.wait()
        done.signal()
    }

    func value() throws -> T {
        wait()
        return try result!.get()
    }
}
