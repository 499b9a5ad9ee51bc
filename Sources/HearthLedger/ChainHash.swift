import Crypto

/// A SHA-256 value in the ledger's hash chain, stored inline (no heap allocation per event).
public struct ChainHash: Hashable, Sendable, Sequence, CustomStringConvertible {
    private var words: (UInt64, UInt64, UInt64, UInt64)

    /// 32 zero bytes: the "previous hash" of the first event.
    public static let zero = ChainHash(words: (0, 0, 0, 0))

    private init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

    /// From exactly 32 bytes.
    public init(_ bytes: some Sequence<UInt8>) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { storage in
            var index = 0
            for byte in bytes where index < 32 {
                storage[index] = byte
                index += 1
            }
            precondition(index == 32, "a chain hash is 32 bytes")
        }
        self.words = words
    }

    /// The SHA-256 of `bytes`, straight from the buffer (no copy, no sequence walked).
    public static func of(_ bytes: UnsafeRawBufferPointer) -> ChainHash {
        var hasher = SHA256()
        hasher.update(bufferPointer: bytes)
        return hasher.finalize().withUnsafeBytes { ChainHash(buffer: $0) }
    }

    public init(buffer: UnsafeRawBufferPointer) {
        precondition(buffer.count == 32, "a chain hash is 32 bytes")
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: buffer) }
        self.words = words
    }

    public func makeIterator() -> IndexingIterator<[UInt8]> {
        withUnsafeBytes(of: words) { Array($0) }.makeIterator()
    }

    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: words, body)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    public var description: String { hex(self) }
}
