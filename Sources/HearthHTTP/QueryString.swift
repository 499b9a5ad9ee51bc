import Hummingbird

/// A request's query parameters, read once per request. Byte-level and decoding only what is
/// percent-encoded: every client call carries `?key=`, so this is on the hot path.
struct QueryString: Sendable {
    private(set) var values: [String: String] = [:]

    init(_ request: Request) {
        guard let query = request.uri.query, !query.isEmpty else { return }
        for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]) else { continue }
            values[name] = parts.count > 1 ? Self.decode(parts[1]) ?? "" : ""
        }
    }

    subscript(name: String) -> String? { values[name] }

    /// Percent-decoding with '+' as a space; `nil` for malformed escapes or invalid UTF-8.
    static func decode(_ bytes: Substring.UTF8View.SubSequence) -> String? {
        guard bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(bytes)
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let high = bytes.index(after: index)
                guard high < bytes.endIndex, bytes.index(after: high) < bytes.endIndex,
                    let value = UInt8(String(decoding: bytes[high...bytes.index(after: high)], as: UTF8.self), radix: 16)
                else { return nil }
                output.append(value)
                index = bytes.index(high, offsetBy: 2)
            } else {
                output.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index = bytes.index(after: index)
            }
        }
        return String(validating: output, as: UTF8.self)
    }
}
