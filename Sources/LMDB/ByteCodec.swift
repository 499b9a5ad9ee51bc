/// How a Swift value becomes LMDB key or value bytes, and back (heed's codec idea).
///
/// Encoders hand LMDB a borrowed buffer; decoders copy out of LMDB's memory map, because
/// those bytes are valid only until the transaction ends.
public protocol ByteEncodable {
    func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

public protocol ByteDecodable {
    /// Decodes from bytes that are valid only for the duration of the call.
    init(decoding bytes: UnsafeRawBufferPointer) throws
}

public typealias ByteCodable = ByteEncodable & ByteDecodable

extension Array: ByteEncodable where Element == UInt8 {
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }
}

extension Array: ByteDecodable where Element == UInt8 {
    public init(decoding bytes: UnsafeRawBufferPointer) { self.init(bytes) }
}

/// Bytes already in memory (a record received whole), stored as they are.
extension UnsafeRawBufferPointer: ByteEncodable {
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(self)
    }
}

extension String: ByteEncodable {
    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

extension String: ByteDecodable {
    public init(decoding bytes: UnsafeRawBufferPointer) {
        self.init(decoding: bytes, as: UTF8.self)
    }
}

/// A `UInt64` stored big-endian, so that LMDB's bytewise key order is numeric order.
public struct BigEndianUInt64: ByteCodable, Hashable, Comparable, Sendable {
    public var value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public func withEncodedBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var bigEndian = value.bigEndian
        return try withUnsafeBytes(of: &bigEndian, body)
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count == 8 else { throw ByteDecodingError(expected: "8-byte big-endian integer", found: bytes.count) }
        var raw: UInt64 = 0
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: bytes) }
        value = UInt64(bigEndian: raw)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
}

public struct ByteDecodingError: Error, CustomStringConvertible, Sendable {
    public let expected: String
    public let found: Int

    public init(expected: String, found: Int) {
        self.expected = expected
        self.found = found
    }

    public var description: String { "cannot decode \(expected) from \(found) bytes" }
}
