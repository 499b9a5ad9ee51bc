/// `application/x-www-form-urlencoded` text (`a=1&b=x%20y`), as in query strings, form bodies
/// and the fake IdP's `postBody`. Byte-level: query strings are on every request's path.
public enum FormEncoding {
    /// The fields in order; a field with a malformed escape or invalid UTF-8 is skipped.
    public static func fields(_ text: some StringProtocol) -> [(name: String, value: String)] {
        // One pass over the bytes: every request's query string comes through here.
        let bytes = Array(text.utf8)
        var fields: [(name: String, value: String)] = []
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
            let pair = bytes[start..<end]
            start = end + 1
            guard !pair.isEmpty else { continue }
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else {
                if let name = decode(pair) { fields.append((name, "")) }
                continue
            }
            if let name = decode(pair[..<equals]), let value = decode(pair[(equals + 1)...]) { fields.append((name, value)) }
        }
        return fields
    }

    /// `name=value&…`, each percent-encoded.
    public static func encode(_ fields: [(name: String, value: String)]) -> String {
        fields.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }.joined(separator: "&")
    }

    /// Every byte but RFC 3986's unreserved ASCII (`A-Z a-z 0-9 - . _ ~`) as `%XX`: safe in a
    /// query value, a fragment, or a URL nested in another's query.
    public static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Percent-decoding with '+' as a space; `nil` for malformed escapes or invalid UTF-8.
    public static func decode<Bytes: Collection>(_ bytes: Bytes) -> String? where Bytes.Element == UInt8 {
        guard bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(validating: bytes, as: UTF8.self)
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                output.append(high << 4 | low)
            case UInt8(ascii: "+"):
                output.append(UInt8(ascii: " "))
            default:
                output.append(byte)
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
