import LMDB

/// Walks the hash chain from the first event: sequence numbers gapless and matching their
/// keys, every previous-hash equal to the prior record's hash, every hash recomputed.
public struct LedgerVerifier {
    public struct Outcome: Equatable, Sendable {
        public var eventsChecked: UInt64
        /// Hash of the last good record; publish it elsewhere to anchor the chain.
        public var headHash: ChainHash
        public var failure: Failure?
        /// The replaced ledger whose head the first record links to, if any.
        public var origin: LedgerOrigin?
        /// Records written before personal data was sealed (format 1), which hold it in plain
        /// text whatever keys are destroyed: `hearth ledger seal` rewrites them.
        public var plainTextRecords: UInt64 = 0

        public var isIntact: Bool { failure == nil }
    }

    public struct Failure: Equatable, Sendable, CustomStringConvertible {
        public var sequence: UInt64
        public var reason: String
        public var description: String { "event \(sequence): \(reason)" }
    }

    public let ledger: Ledger
    public let environment: Environment
    /// Records per read transaction; short transactions keep LMDB from pinning old pages.
    public var batchSize = 50_000

    public init(ledger: Ledger, environment: Environment) {
        self.ledger = ledger
        self.environment = environment
    }

    /// `progress(checked, total)` is called after each batch.
    public func verify(progress: (UInt64, UInt64) -> Void = { _, _ in }) throws -> Outcome {
        let (total, origin) = try environment.read { (try ledger.head(in: $0).sequence, try ledger.origin(in: $0)) }
        var previousHash = origin?.previousHash ?? Ledger.Head.genesis.hash
        var expected: UInt64 = 1
        var failure: Failure?
        var plainText: UInt64 = 0
        while failure == nil {
            var visited = 0
            try environment.read { txn in
                try ledger.forEachRecord(from: expected, in: txn) { key, record in
                    if let problem = Self.check(record, key: key, expected: expected, previousHash: previousHash) {
                        failure = Failure(sequence: key == expected ? key : expected, reason: problem)
                        return .stop
                    }
                    previousHash = ChainHash(buffer: try RecordFormat.storedHash(of: record))
                    if record[0] < RecordFormat.version { plainText += 1 }
                    expected += 1
                    visited += 1
                    return visited == batchSize ? .stop : .continue
                }
            }
            progress(expected - 1, total)
            if visited < batchSize { break }
        }
        return Outcome(eventsChecked: expected - 1, headHash: previousHash, failure: failure, origin: origin, plainTextRecords: plainText)
    }

    static func check(_ record: UnsafeRawBufferPointer, key: UInt64, expected: UInt64, previousHash: ChainHash) -> String? {
        guard key == expected else { return "sequence gap: found \(key) where \(expected) was expected" }
        guard let stored = try? RecordFormat.sequence(of: record), stored == key else {
            return "record claims a different sequence number than its key"
        }
        guard let previous = try? RecordFormat.previousHash(of: record), let hash = try? RecordFormat.storedHash(of: record) else {
            return "record is truncated"
        }
        guard ChainHash(buffer: previous) == previousHash else { return "previous-hash does not match the prior event's hash" }
        guard ChainHash.of(RecordFormat.hashedBytes(of: record)) == ChainHash(buffer: hash) else {
            return "hash mismatch: the record was altered"
        }
        return nil
    }
}
