/// HTML built as bytes: long pages (an account's thousand events) without a `String` append per
/// fragment. `escaping` writes text so that it shows and does nothing, as `HTMLPage.escaped`.
struct HTMLBuffer {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 4096) { bytes.reserveCapacity(capacity) }

    /// Markup of our own, as is.
    mutating func markup(_ text: String) {
        bytes += text.utf8
    }

    mutating func escaping(_ text: String) {
        for byte in text.utf8 {
            switch byte {
            case 0x26: bytes += "&amp;".utf8
            case 0x3C: bytes += "&lt;".utf8
            case 0x3E: bytes += "&gt;".utf8
            case 0x22: bytes += "&quot;".utf8
            case 0x27: bytes += "&#39;".utf8
            default: bytes.append(byte)
            }
        }
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}
