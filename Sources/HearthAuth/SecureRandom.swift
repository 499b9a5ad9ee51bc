#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Secrets (refresh tokens, action codes, salts) and uids, from the C library's CSPRNG
/// (`arc4random_buf`, fed by the kernel's `getrandom`). The bytes are drawn 4 KiB at a time
/// and handed out once each, wiped as they go: a sign-up takes about 60 bytes, and a system
/// call per draw was a visible share of its cost.
enum SecureRandom {
    private struct Pool: ~Copyable {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var next = 4096

        mutating func take(_ count: Int) -> [UInt8] {
            if next + count > bytes.count {
                SecureRandom.fill(&bytes)
                next = 0
            }
            let taken = Array(bytes[next..<next + count])
            for index in next..<next + count { bytes[index] = 0 }
            next += count
            return taken
        }
    }

    private static let pool = Mutex(Pool())

    static func bytes(_ count: Int) -> [UInt8] {
        guard count <= 256 else {
            var bytes = [UInt8](repeating: 0, count: count)
            fill(&bytes)
            return bytes
        }
        return pool.withLock { $0.take(count) }
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

    /// The C library's CSPRNG, seeded and reseeded from the kernel's (`getrandom`); it cannot fail.
    private static func fill(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
    }
}
