import HearthCrypto
import Testing

@Suite("SecureRandom: OpenSSL's DRBG, drawn through a pool")
struct SecureRandomTests {
    @Test("draws spanning several refills of the pool are all different, and none is all zeros")
    func drawsDiffer() {
        // 16-byte draws, 1,200 of them: 19,200 bytes, past the 4 KiB pool four times.
        let draws = (0..<1200).map { _ in SecureRandom.bytes(16) }
        #expect(Set(draws).count == draws.count)
        #expect(!draws.contains([UInt8](repeating: 0, count: 16)))
    }

    @Test("a fill larger than the pool hands out, and one in place, are filled")
    func fills() {
        let large = SecureRandom.bytes(5000)
        // 5,000 bytes with no byte value seen: not a sample of a uniform source.
        #expect(Set(large).count > 200)
        var nonce = [UInt8](repeating: 0, count: 12)
        nonce.withUnsafeMutableBytes { SecureRandom.fill($0) }
        #expect(nonce != [UInt8](repeating: 0, count: 12))
    }

    @Test("strings use only their alphabet, every symbol of it")
    func strings() {
        let alphabet = Array("abc".utf8)
        let drawn = SecureRandom.string(3000, from: alphabet)
        #expect(drawn.utf8.count == 3000)
        #expect(Set(drawn.utf8) == Set(alphabet))
    }
}
