/// Hearth's compact binary format, used for stored events and projection records.
/// Integers are LEB128 varints (signed ones zig-zagged), strings and byte arrays are
/// length-prefixed, optionals carry a presence byte, arrays a count. Deterministic: the same
/// value always gives the same bytes, which the hash chain and the rebuild digest rely on.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer but keeps its capacity, to encode many records with one allocation.
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// `removeAll`, the bytes zeroed first: a buffer reused for plaintext holds only the last.
    public mutating func wipeAll() {
        bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        bytes.removeAll(keepingCapacity: true)
    }

    public mutating func write(_ byte: UInt8) { bytes.append(byte) }

    public mutating func write(_ value: Bool) { bytes.append(value ? 1 : 0) }

    public mutating func write(varint value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    public mutating func write(_ value: Int64) {
        write(varint: UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func write(_ value: Int) { write(Int64(value)) }

    public mutating func write(bigEndian value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func write(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            write(varint: UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func write(bytes value: [UInt8]) {
        write(varint: UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    public mutating func write(raw value: some Sequence<UInt8>) { bytes.append(contentsOf: value) }

    /// Appends `count` bytes that `fill` writes (a sealed part, say), without first growing the
    /// buffer by zeros.
    public mutating func write(count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        try withUnsafeTemporaryAllocation(byteCount: count, alignment: 16) { buffer in
            try fill(buffer)
            bytes.append(contentsOf: UnsafeRawBufferPointer(buffer))
        }
    }

    public mutating func write<T>(_ value: T?, _ encode: (inout ByteWriter, T) -> Void) {
        guard let value else { return write(UInt8(0)) }
        write(UInt8(1))
        encode(&self, value)
    }

    public mutating func write(_ value: String?) { write(value) { $0.write($1) } }
    public mutating func write(_ value: Int64?) { write(value) { $0.write($1) } }
    public mutating func write(_ value: Int?) { write(value) { $0.write($1) } }
    public mutating func write(_ value: Bool?) { write(value) { $0.write($1) } }

    public mutating func write<T>(_ values: [T], _ encode: (inout ByteWriter, T) -> Void) {
        write(varint: UInt64(values.count))
        for value in values { encode(&self, value) }
    }

    public mutating func write(_ value: some BinaryEncodable) { value.encode(to: &self) }
}

/// Reads what `ByteWriter` wrote, from bytes that are valid only while it is in use.
public struct ByteReader {
    private let buffer: UnsafeRawBufferPointer
    public private(set) var offset: Int

    public init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    public var isAtEnd: Bool { offset == buffer.count }
    public var remaining: Int { buffer.count - offset }

    private mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw BinaryFormatError.truncated(at: offset) }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    public mutating func readByte() throws -> UInt8 {
        guard offset < buffer.count else { throw BinaryFormatError.truncated(at: offset) }
        defer { offset += 1 }
        return buffer[offset]
    }

    public mutating func readBool() throws -> Bool {
        switch try readByte() {
        case 0: return false
        case 1: return true
        default: throw BinaryFormatError.invalid("boolean", at: offset - 1)
        }
    }

    public mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64 else { throw BinaryFormatError.invalid("varint", at: offset) }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    public mutating func readInt64() throws -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    public mutating func readInt() throws -> Int { Int(try readInt64()) }

    public mutating func readBigEndianUInt64() throws -> UInt64 {
        let raw = try take(8)
        var value: UInt64 = 0
        for byte in raw { value = value << 8 | UInt64(byte) }
        return value
    }

    /// A length-prefixed run of bytes, viewed without copying.
    public mutating func readByteString() throws -> UnsafeRawBufferPointer {
        let count = try readVarint()
        guard count <= UInt64(remaining) else { throw BinaryFormatError.truncated(at: offset) }
        return try take(Int(count))
    }

    public mutating func readString() throws -> String {
        String(decoding: try readByteString(), as: UTF8.self)
    }

    public mutating func readBytes() throws -> [UInt8] {
        Array(try readByteString())
    }

    /// A view of the next `count` bytes, without copying.
    public mutating func readRaw(_ count: Int) throws -> UnsafeRawBufferPointer { try take(count) }

    public mutating func readOptional<T>(_ decode: (inout ByteReader) throws -> T) throws -> T? {
        switch try readByte() {
        case 0: return nil
        case 1: return try decode(&self)
        default: throw BinaryFormatError.invalid("optional", at: offset - 1)
        }
    }

    public mutating func readOptionalString() throws -> String? { try readOptional { try $0.readString() } }
    /// Reads past an optional string or byte string without making it.
    public mutating func skipOptionalString() throws { _ = try readOptional { try $0.readByteString() } }
    public mutating func readOptionalInt64() throws -> Int64? { try readOptional { try $0.readInt64() } }
    public mutating func readOptionalInt() throws -> Int? { try readOptional { try $0.readInt() } }
    public mutating func readOptionalBool() throws -> Bool? { try readOptional { try $0.readBool() } }

    public mutating func readArray<T>(_ decode: (inout ByteReader) throws -> T) throws -> [T] {
        let count = try readVarint()
        guard count <= UInt64(remaining) else { throw BinaryFormatError.truncated(at: offset) }
        var values: [T] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count { values.append(try decode(&self)) }
        return values
    }

    public mutating func read<T: BinaryDecodable>(_ type: T.Type = T.self) throws -> T { try T(from: &self) }

    public mutating func readEnum<T: RawRepresentable>(_ type: T.Type = T.self) throws -> T where T.RawValue == String {
        let raw = try readString()
        guard let value = T(rawValue: raw) else { throw BinaryFormatError.invalid("\(T.self) '\(raw)'", at: offset) }
        return value
    }
}

public protocol BinaryEncodable {
    func encode(to writer: inout ByteWriter)
}

public protocol BinaryDecodable {
    init(from reader: inout ByteReader) throws
}

public typealias BinaryCodable = BinaryEncodable & BinaryDecodable

extension BinaryEncodable {
    public var binaryEncoded: [UInt8] {
        var writer = ByteWriter()
        encode(to: &writer)
        return writer.bytes
    }
}

extension BinaryDecodable {
    /// Decodes a whole buffer; trailing bytes are an error.
    public init(binary bytes: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(bytes)
        self = try Self(from: &reader)
        guard reader.isAtEnd else { throw BinaryFormatError.trailingBytes(reader.remaining) }
    }
}

public enum BinaryFormatError: Error, Equatable, CustomStringConvertible {
    case truncated(at: Int)
    case invalid(String, at: Int)
    case trailingBytes(Int)
    case unknownEventType(String, version: Int)

    public var description: String {
        switch self {
        case .truncated(let offset): "record truncated at byte \(offset)"
        case .invalid(let what, let offset): "invalid \(what) at byte \(offset)"
        case .trailingBytes(let count): "\(count) unexpected trailing bytes"
        case .unknownEventType(let name, let version): "unknown event type \(name) v\(version)"
        }
    }
}
