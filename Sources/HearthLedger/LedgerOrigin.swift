import HearthDomain
import LMDB

/// Where a chain begins when it is not the first: a ledger rewritten by `hearth ledger seal`
/// continues the chain of the one it replaced. Its first record's previous hash is the old
/// head's hash, and `ledger.origin` records which head that was and when, so `audit verify`
/// can show that the new chain commits to the old one (whose head hash may have been
/// published). A first chain has no origin: it begins at the zero hash.
public struct LedgerOrigin: Equatable, Sendable {
    /// The replaced ledger's head: its last sequence number and hash.
    public var previousSequence: UInt64
    public var previousHash: ChainHash
    /// Unix milliseconds.
    public var sealedAt: Int64
    /// Who ran the seal, as the operator gave it (a login name); `nil` in origins recorded
    /// before it was kept.
    public var sealedBy: String?

    public init(previousSequence: UInt64, previousHash: ChainHash, sealedAt: Int64, sealedBy: String?) {
        self.previousSequence = previousSequence
        self.previousHash = previousHash
        self.sealedAt = sealedAt
        self.sealedBy = sealedBy
    }

    static let tableName = "ledger.origin"
    static let key = "origin"

    var encoded: [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.write(bigEndian: previousSequence)
        previousHash.withBytes { writer.write(raw: $0) }
        writer.write(sealedAt)
        writer.write(sealedBy)
        return writer.bytes
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(bytes)
        previousSequence = try reader.readBigEndianUInt64()
        previousHash = ChainHash(buffer: try reader.readRaw(RecordFormat.hashSize))
        sealedAt = try reader.readInt64()
        sealedBy = reader.isAtEnd ? nil : try reader.readOptionalString()
        guard reader.isAtEnd else { throw BinaryFormatError.trailingBytes(reader.remaining) }
    }
}
