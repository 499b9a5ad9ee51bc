import Crypto
import Foundation

/// An authenticator app, as the tests play it: RFC 6238 codes from a base32 secret, written
/// apart from the code under test and checked against the RFC's own vectors.
struct TOTPGenerator {
    let secret: [UInt8]

    init(secret: [UInt8]) { self.secret = secret }

    /// From `totpSessionInfo.sharedSecretKey` (RFC 4648 base32, unpadded).
    init?(base32 text: String) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = ""
        for character in text.uppercased() where character != "=" {
            guard let index = alphabet.firstIndex(of: character) else { return nil }
            let binary = String(index, radix: 2)
            bits += String(repeating: "0", count: 5 - binary.count) + binary
        }
        var bytes: [UInt8] = []
        var index = bits.startIndex
        while bits.distance(from: index, to: bits.endIndex) >= 8 {
            let next = bits.index(index, offsetBy: 8)
            bytes.append(UInt8(bits[index..<next], radix: 2)!)
            index = next
        }
        self.init(secret: bytes)
    }

    func code(at unixSeconds: Int64, digits: Int = 6, period: Int64 = 30) -> String {
        var counter = UInt64(unixSeconds / period).bigEndian
        let message = Data(bytes: &counter, count: 8)
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[19] & 0xf)
        let value =
            (UInt32(mac[offset]) & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8
            | UInt32(mac[offset + 3])
        let modulus = UInt32(pow(10, Double(digits)))
        let text = String(value % modulus)
        return String(repeating: "0", count: digits - text.count) + text
    }
}
