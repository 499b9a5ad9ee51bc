import CLibCrypto
import Synchronization

/// Secrets (refresh tokens, action codes, salts, data keys), nonces and uids, from OpenSSL's
/// private DRBG (`RAND_priv_bytes`: NIST SP 800-90A CTR_DRBG with AES-256, seeded and reseeded
/// from the kernel's `getrandom`, and reseeded in a forked child). The bytes are drawn 4 KiB at
/// a time and handed out once each, wiped as they go: a sealed sign-up takes about 70 bytes (a
/// key and three nonces), on the writer thread. Measured on this VM, the kernel hands out
/// 4-6 ns a byte (5 µs for 1 KiB); the DRBG's cost is mostly per call (its locks, and its
/// parameters looked up by name): 1.6 µs for 64 bytes, 1.8 µs for 1 KiB, 2.5 µs for 4 KiB, and
/// several times that from the writer thread, whose caches it finds cold. The pool stays small
/// so that few future secrets sit in memory.
public enum SecureRandom {
    /// Only ever touched under its mutex (so `@unchecked`: its memory is a raw pointer).
    private struct Pool: ~Copyable, @unchecked Sendable {
        /// Plain memory rather than an array: a draw is a copy and a wipe, with no uniqueness
        /// or bounds checks under the lock (a sealed sign-up draws four times).
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        var next = 4096

        mutating func take(into buffer: UnsafeMutableRawBufferPointer) {
            let count = buffer.count
            if next + count > bytes.count {
                SecureRandom.fillFromDRBG(bytes)
                next = 0
            }
            let taken = UnsafeMutableRawBufferPointer(rebasing: bytes[next..<next + count])
            buffer.copyMemory(from: UnsafeRawBufferPointer(taken))
            taken.initializeMemory(as: UInt8.self, repeating: 0)
            next += count
        }

        deinit {
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            bytes.deallocate()
        }
    }

    private static let pool = Mutex(Pool())

    public static func bytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { fill($0) }
        return bytes
    }

    /// Fills `buffer` (a nonce in place, say) without an array in between.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        // Large draws (a pool's worth or more) come straight from the DRBG.
        guard buffer.count <= 256 else { return fillFromDRBG(buffer) }
        pool.withLock { $0.take(into: buffer) }
    }

    /// `count` characters drawn uniformly from an ASCII `alphabet` (at most 256 symbols):
    /// bytes that would bias the modulo are rejected.
    public static func string(_ count: Int, from alphabet: [UInt8]) -> String {
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

    /// Without randomness nothing secret can be made (the DRBG fails only when the kernel
    /// does not seed it), so its failing is fatal.
    private static func fillFromDRBG(_ buffer: UnsafeMutableRawBufferPointer) {
        let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        guard RAND_priv_bytes(base, Int32(buffer.count)) == 1 else { fatalError("OpenSSL's DRBG could not be seeded") }
    }
}
