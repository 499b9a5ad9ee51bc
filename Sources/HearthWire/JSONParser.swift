/// A strict RFC 8259 parser into `JSONValue`: UTF-8 validated, nesting bounded (so a hostile
/// body of a million '[' cannot exhaust the stack), integers kept as integers.
struct JSONParser {
    struct Failure: Error {}

    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw Failure() }
        return value
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { index += 1 }
    }

    private mutating func expect(_ literal: String) throws {
        for byte in literal.utf8 {
            guard current == byte else { throw Failure() }
            index += 1
        }
    }

    private mutating func value() throws -> JSONValue {
        switch current {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case let byte? where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte): return try number()
        default: throw Failure()
        }
    }

    private mutating func nested<T>(_ body: (inout JSONParser) throws -> T) throws -> T {
        depth += 1
        guard depth <= Self.maximumDepth else { throw Failure() }
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func object() throws -> JSONValue {
        try nested { parser in
            parser.index += 1
            var members: [String: JSONValue] = [:]
            parser.skipWhitespace()
            if parser.current == UInt8(ascii: "}") {
                parser.index += 1
                return .object(members)
            }
            while true {
                parser.skipWhitespace()
                guard parser.current == UInt8(ascii: "\"") else { throw Failure() }
                let key = try parser.string()
                parser.skipWhitespace()
                try parser.expect(":")
                parser.skipWhitespace()
                members[key] = try parser.value()
                parser.skipWhitespace()
                if parser.current == UInt8(ascii: ",") {
                    parser.index += 1
                    continue
                }
                try parser.expect("}")
                return .object(members)
            }
        }
    }

    private mutating func array() throws -> JSONValue {
        try nested { parser in
            parser.index += 1
            var elements: [JSONValue] = []
            parser.skipWhitespace()
            if parser.current == UInt8(ascii: "]") {
                parser.index += 1
                return .array(elements)
            }
            while true {
                parser.skipWhitespace()
                elements.append(try parser.value())
                parser.skipWhitespace()
                if parser.current == UInt8(ascii: ",") {
                    parser.index += 1
                    continue
                }
                try parser.expect("]")
                return .array(elements)
            }
        }
    }

    private mutating func string() throws -> String {
        index += 1  // opening quote
        // Most strings (tokens, emails, ids) have no escapes: take them in one slice.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let text = String(validating: bytes[index..<end], as: UTF8.self) else { throw Failure() }
            index = end + 1
            return text
        }
        var output: [UInt8] = Array(bytes[index..<end])
        index = end
        while true {
            guard let byte = current else { throw Failure() }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: output, as: UTF8.self) else { throw Failure() }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = current else { throw Failure() }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0c)
                case UInt8(ascii: "n"): output.append(0x0a)
                case UInt8(ascii: "r"): output.append(0x0d)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"): output.append(contentsOf: try unicodeEscape())
                default: throw Failure()
                }
            case 0..<0x20:
                throw Failure()
            default:
                output.append(byte)
            }
        }
    }

    /// `\uXXXX`, with surrogate pairs joined; lone surrogates are errors.
    private mutating func unicodeEscape() throws -> [UInt8] {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            try expect("\\u")
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw Failure() }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw Failure() }
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Self.hexValue(byte) else { throw Failure() }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }

    private mutating func number() throws -> JSONValue {
        let start = index
        var integral = true
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (0x30...0x39).contains(first) else { throw Failure() }
        if first == 0x30 { index += 1 } else { skipDigits() }
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard try digitsFollow() else { throw Failure() }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard try digitsFollow() else { throw Failure() }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw Failure() }
        return .double(value)
    }

    private mutating func skipDigits() {
        while let byte = current, (0x30...0x39).contains(byte) { index += 1 }
    }

    private mutating func digitsFollow() throws -> Bool {
        let start = index
        skipDigits()
        return index > start
    }
}
