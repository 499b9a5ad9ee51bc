import Crypto
import HearthCrypto

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP) as Identity Platform issues
/// them: HMAC-SHA1, six digits, 30-second steps, a 160-bit secret.
public struct TOTP: Sendable {
    public static let digits = 6
    public static let periodSeconds: Int64 = 30
    public static let secretBytes = 20
    /// The name `totpSessionInfo.hashingAlgorithm` gives the SDKs for their `otpauth://` URL.
    public static let algorithmName = "SHA1"

    /// The time step a Unix time (seconds) falls in.
    public static func step(at unixSeconds: Int64) -> Int64 {
        unixSeconds >= 0 ? unixSeconds / periodSeconds : (unixSeconds - periodSeconds + 1) / periodSeconds
    }

    /// The code for `step`, as `digits` ASCII digits (RFC 4226 §5.3's dynamic truncation).
    public static func code(secret: [UInt8], step: Int64, digits: Int = TOTP.digits) -> [UInt8] {
        var counter = UInt64(bitPattern: step).bigEndian
        let mac = withUnsafeBytes(of: &counter) {
            Array(HMAC<Insecure.SHA1>.authenticationCode(for: $0, using: SymmetricKey(data: secret)))
        }
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8
            | UInt32(mac[offset + 3])
        var value = binary
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        value %= modulus
        var text = [UInt8](repeating: UInt8(ascii: "0"), count: digits)
        for index in stride(from: digits - 1, through: 0, by: -1) {
            text[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
        return text
    }

    /// The step within `adjacent` steps of `now` whose code `given` is, if any. Every step of the
    /// window is computed and compared in constant time, so how long the check takes says
    /// nothing about which step, or whether any, matched.
    public static func matchingStep(_ given: String, secret: [UInt8], at unixSeconds: Int64, adjacent: Int) -> Int64? {
        let candidate = Array(given.utf8)
        let current = step(at: unixSeconds)
        var found: Int64?
        for offset in -Int64(adjacent)...Int64(adjacent) {
            let expected = code(secret: secret, step: current + offset)
            // Compared whatever its length, so a wrong length takes as long as a wrong code.
            if constantTimeEquals(expected, candidate) && found == nil { found = current + offset }
        }
        return found
    }
}
