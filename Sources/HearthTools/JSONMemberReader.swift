import HearthWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file holding one JSON object a piece at a time: each top-level member whole,
/// except the members named in `streamed` (arrays), whose elements come one by one. A file of
/// a million users (`{"users": [...]}`) is read in 1 MiB pieces and never sits in memory;
/// no single value may exceed `maximumValueBytes`.
final class JSONMemberReader {
    enum Item {
        /// A top-level member other than a streamed one: its key and its value's JSON text.
        case member(String, [UInt8])
        /// The next element of the streamed array `key`: its JSON text.
        case element(key: String, [UInt8])
    }

    struct Malformed: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "not a JSON object of the expected shape at byte \(offset): \(reason)" }
    }

    static let maximumValueBytes = 8 << 20

    private let descriptor: Int32
    private let streamed: Set<String>
    private var buffer: [UInt8] = []
    private var position = 0
    /// Bytes dropped from the front of `buffer` so far (for offsets in errors).
    private var consumed = 0
    private var endOfFile = false
    private enum State {
        case start, members, firstMember
        case elements(String)
        case firstElement(String)
        case done
    }
    private var state = State.start

    private let chunkSize: Int

    init(path: String, streamed: Set<String>, chunkSize: Int = 1 << 20) throws {
        self.chunkSize = chunkSize
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(path: path, code: errno) }
        self.streamed = streamed
    }

    deinit { close(descriptor) }

    struct FileError: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String { "cannot read \(path): \(String(cString: strerror(code)))" }
    }

    /// The streamed arrays found so far (an empty one yields no element).
    private(set) var arraysEntered: Set<String> = []

    /// Bytes of the file read so far.
    var offset: Int { consumed + position }

    /// The next member or element; `nil` after the object's closing brace.
    func next() throws -> Item? {
        while true {
            switch state {
            case .start:
                try skipWhitespace()
                try expect(UInt8(ascii: "{"))
                state = .firstMember
            case .firstMember, .members:
                let first = if case .firstMember = state { true } else { false }
                try skipWhitespace()
                if try peek() == UInt8(ascii: "}") {
                    position += 1
                    state = .done
                    try skipWhitespace()
                    guard try peekOrEnd() == nil else { throw malformed("text after the object") }
                    continue
                }
                if !first { try expect(UInt8(ascii: ",")) }
                try skipWhitespace()
                let keyBytes = try valueBytes()
                guard case .string(let key)? = JSONValue.parse(keyBytes) else { throw malformed("a member name must be a string") }
                try skipWhitespace()
                try expect(UInt8(ascii: ":"))
                try skipWhitespace()
                if streamed.contains(key) {
                    try expect(UInt8(ascii: "["))
                    arraysEntered.insert(key)
                    state = .firstElement(key)
                    continue
                }
                state = .members
                return .member(key, try valueBytes())
            case .firstElement(let key), .elements(let key):
                let first = if case .firstElement = state { true } else { false }
                try skipWhitespace()
                if try peek() == UInt8(ascii: "]") {
                    position += 1
                    state = .members
                    continue
                }
                if !first {
                    try expect(UInt8(ascii: ","))
                    try skipWhitespace()
                }
                state = .elements(key)
                return .element(key: key, try valueBytes())
            case .done:
                return nil
            }
        }
    }

    // MARK: Scanning

    private func malformed(_ reason: String) -> Malformed { Malformed(offset: offset, reason: reason) }

    /// Reads more of the file, keeping the bytes from `keeping` on; false at the end of the file.
    private func fill(keeping start: Int) throws -> Bool {
        guard !endOfFile else { return false }
        if start > 0 {
            buffer.removeFirst(start)
            consumed += start
            position -= start
        }
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw FileError(path: "the file", code: errno) }
            if count == 0 {
                endOfFile = true
                return false
            }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    private func peekOrEnd() throws -> UInt8? {
        while position >= buffer.count {
            guard try fill(keeping: position) else { return nil }
        }
        return buffer[position]
    }

    private func peek() throws -> UInt8 {
        guard let byte = try peekOrEnd() else { throw malformed("the file ends early") }
        return byte
    }

    private func expect(_ byte: UInt8) throws {
        guard try peek() == byte else { throw malformed("expected '\(Character(Unicode.Scalar(byte)))'") }
        position += 1
    }

    private func skipWhitespace() throws {
        while let byte = try peekOrEnd(), byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { position += 1 }
    }

    /// The JSON text of the value starting here (found by its extent; parsed by the caller).
    private func valueBytes() throws -> [UInt8] {
        var index = position
        var depth = 0
        var inString = false
        var escaped = false
        func value(through end: Int) -> [UInt8] {
            defer { position = end }
            return Array(buffer[position..<end])
        }
        while true {
            if index >= buffer.count {
                let before = position
                let more = try fill(keeping: position)
                index -= before - position
                if more { continue }
                if depth == 0 && !inString && index > position { return value(through: index) }
                throw malformed("the file ends inside a value")
            }
            guard index - position <= Self.maximumValueBytes else { throw malformed("a value longer than 8 MiB") }
            let byte = buffer[index]
            index += 1
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return value(through: index) }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else {
                    guard index - 1 > position else { throw malformed("a value is missing") }
                    return value(through: index - 1)
                }
                depth -= 1
                if depth == 0 { return value(through: index) }
            case UInt8(ascii: ","), 0x20, 0x0a, 0x0d, 0x09:
                if depth == 0 {
                    guard index - 1 > position else { throw malformed("a value is missing") }
                    return value(through: index - 1)
                }
            default: break
            }
        }
    }
}
