import Crypto
import HearthLedger
import LMDB

/// Catch-up, rebuild and digest. Rebuild is catch-up from an emptied state, so the code
/// that keeps projections current after a crash or upgrade is the code a rebuild exercises.
public struct ProjectionMaintenance {
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
        while true {
            let limit = chunkSize
            let count = try environment.writer.perform { txn -> Int in
                var count = 0
                let writer = projections.writer(txn)
                try ledger.forEachRecord(from: try projections.checkpoint(in: txn) + 1, in: txn) { _, record in
                    try writer.apply(try RecordFormat.decode(record))
                    count += 1
                    return count == limit ? .stop : .continue
                }
                try writer.flush()
                return count
            }
            applied += UInt64(count)
            progress(min(applied, total), total)
            if count < limit { return applied }
        }
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
