import Crypto
import CryptoExtras
import Foundation

/// `hearth bench signing`: RS256 signatures per second through each library Hearth could sign
/// with, on one thread and on every core: the measurement behind signing RS256 with the
/// system's OpenSSL (and keeping swift-crypto for everything else).
public enum SigningBenchmark {
    public struct Rate: Sendable {
        public var library: String
        public var threads: Int
        public var perSecond: Double
    }

    public static func run(seconds: Double, threads: Int, log: (String) -> Void) throws -> [Rate] {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        guard let openSSL = OpenSSLRSASigner(pem: key.pemRepresentation) else { throw SigningKeyError.openSSLRefusedKey }
        let digest = SHA256.hash(data: Array("header.payload".utf8))
        let bytes = Array(digest)
        let libraries: [(String, @Sendable () throws -> Void)] = [
            ("OpenSSL 3 (libcrypto)", { _ = try openSSL.sign(digest: bytes) }),
            ("swift-crypto (BoringSSL)", { _ = try key.signature(for: digest, padding: .insecurePKCS1v1_5) }),
        ]
        var rates: [Rate] = []
        for (library, sign) in libraries {
            for count in Set([1, threads]).sorted() {
                log("\(library), \(count) thread\(count == 1 ? "" : "s") …")
                rates.append(Rate(library: library, threads: count, perSecond: try rate(of: sign, threads: count, seconds: seconds)))
            }
        }
        return rates
    }

    /// Signatures per second, `threads` threads signing for `seconds`.
    private static func rate(of sign: @escaping @Sendable () throws -> Void, threads: Int, seconds: Double) throws -> Double {
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
        counts.initialize(repeating: 0)
        defer { counts.deallocate() }
        let failed = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        failed.initialize(to: false)
        defer { failed.deallocate() }
        let deadline = Date().addingTimeInterval(seconds)
        let start = Date()
        let group = DispatchGroup()
        nonisolated(unsafe) let shared = (counts, failed)
        for index in 0..<threads {
            group.enter()
            Thread {
                var done = 0
                while Date() < deadline {
                    do { try sign() } catch { shared.1.pointee = true }
                    done += 1
                }
                shared.0[index] = done
                group.leave()
            }.start()
        }
        group.wait()
        if failed.pointee { throw OpenSSLError.signing }
        return Double(counts.reduce(0, +)) / Date().timeIntervalSince(start)
    }
}
