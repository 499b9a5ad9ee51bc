import Crypto

/// Secrets (refresh tokens, action codes, salts) and uids from BoringSSL's CSPRNG in one call
/// each. Drawing them a byte at a time from `SystemRandomNumberGenerator` cost one `getrandom`
/// system call per value drawn (per byte of a token), on every sign-up.
enum SecureRandom {
    static func bytes(_ count: Int) -> [UInt8] {
        SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }

    /// `count` characters drawn uniformly from an ASCII `alphabet` (at most 256 symbols):
    /// bytes that would bias the modulo are rejected.
    static func string(_ count: Int, from alphabet: [UInt8]) -> String {
        let limit = 256 - 256 % alphabet.count
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            for byte in bytes(count) where Int(byte) < limit && result.count < count {
                result.append(alphabet[Int(byte) % alphabet.count])
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
