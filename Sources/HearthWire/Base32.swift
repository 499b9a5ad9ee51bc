/// Base32 (RFC 4648 §6), as authenticator apps take a TOTP secret: upper-case, unpadded when
/// encoded; decoding accepts either case, padding and the spaces apps show between groups.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
        }
        if bits > 0 { output.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// `nil` for anything else than base32, or trailing bits that are not zero.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.utf8 where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "=") {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = byte - UInt8(ascii: "2") + 26
            default: return nil
            }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(buffer >> UInt32(bits) & 0xff))
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
