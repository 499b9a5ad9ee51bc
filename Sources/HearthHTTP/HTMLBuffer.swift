/// HTML built as bytes: long pages (an account's thousand events) without a `String` append per
/// fragment. `escaping` writes text so that it shows and does nothing, as `HTMLPage.escaped`.
struct HTMLBuffer {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 4096) { bytes.reserveCapacity(capacity) }

    /// Markup of our own, as is.
    mutating func markup(_ text: String) {
        bytes += text.utf8
    }

    /// Runs of ordinary bytes are copied whole; only the five special ones are replaced.
    mutating func escaping(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let replacement: StaticString
                switch utf8[index] {
                case 0x26: replacement = "&amp;"
                case 0x3C: replacement = "&lt;"
                case 0x3E: replacement = "&gt;"
                case 0x22: replacement = "&quot;"
                case 0x27: replacement = "&#39;"
                default: continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                replacement.withUTF8Buffer { bytes.append(contentsOf: $0) }
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}
