import Crypto
import HearthCrypto
import Testing

@Suite("AES-256-GCM through Nettle, against swift-crypto")
struct AES256GCMTests {
    let keyBytes = SecureRandom.bytes(32)
    let associatedData: [UInt8] = Array("record 42".utf8)

    func seal(_ plaintext: [UInt8], with key: AES256GCMKey, authenticating data: [UInt8]) throws -> [UInt8] {
        var box: [UInt8] = [0xAA]  // appends after what is there
        try plaintext.withUnsafeBytes { text in
            try data.withUnsafeBytes { try key.seal(text, authenticating: $0, appendingTo: &box) }
        }
        #expect(box.first == 0xAA)
        return Array(box.dropFirst())
    }

    func open(_ box: [UInt8], with key: AES256GCMKey, authenticating data: [UInt8]) throws -> [UInt8] {
        try box.withUnsafeBytes { sealed in try data.withUnsafeBytes { try key.open(sealed, authenticating: $0) } }
    }

    @Test("what Nettle seals, swift-crypto opens, and the other way round", arguments: [0, 1, 15, 16, 17, 90, 1000])
    func interoperates(length: Int) throws {
        let plaintext = SecureRandom.bytes(length)
        let key = try AES256GCMKey(keyBytes)
        let swiftKey = SymmetricKey(data: keyBytes)

        let ours = try seal(plaintext, with: key, authenticating: associatedData)
        #expect(ours.count == plaintext.count + AES256GCMKey.overhead)
        let theirsOpened = try AES.GCM.open(AES.GCM.SealedBox(combined: ours), using: swiftKey, authenticating: associatedData)
        #expect(Array(theirsOpened) == plaintext)

        let theirs = try AES.GCM.seal(plaintext, using: swiftKey, authenticating: associatedData).combined!
        #expect(try open(Array(theirs), with: key, authenticating: associatedData) == plaintext)

        // Sealed in place, into a buffer of exactly its size: the same message format.
        var inPlace = [UInt8](repeating: 0, count: plaintext.count + AES256GCMKey.overhead)
        plaintext.withUnsafeBytes { text in
            associatedData.withUnsafeBytes { data in inPlace.withUnsafeMutableBytes { key.seal(text, authenticating: data, into: $0) } }
        }
        let inPlaceOpened = try AES.GCM.open(AES.GCM.SealedBox(combined: inPlace), using: swiftKey, authenticating: associatedData)
        #expect(Array(inPlaceOpened) == plaintext)
    }

    @Test("one key seals and opens in turn, many times")
    func alternates() throws {
        let key = try AES256GCMKey(keyBytes)
        for length in 0..<64 {
            let plaintext = SecureRandom.bytes(length)
            let box = try seal(plaintext, with: key, authenticating: associatedData)
            #expect(try open(box, with: key, authenticating: associatedData) == plaintext)
        }
    }

    @Test("a changed byte anywhere, other associated data or another key: refused")
    func refusesTampering() throws {
        let key = try AES256GCMKey(keyBytes)
        let box = try seal(Array("someone@example.com".utf8), with: key, authenticating: associatedData)
        for index in box.indices {
            var changed = box
            changed[index] ^= 0x01
            #expect(throws: AES256GCMError.authenticationFailure) { try open(changed, with: key, authenticating: associatedData) }
        }
        #expect(throws: AES256GCMError.authenticationFailure) { try open(box, with: key, authenticating: Array("record 43".utf8)) }
        #expect(throws: AES256GCMError.authenticationFailure) {
            try open(box, with: try AES256GCMKey(SecureRandom.bytes(32)), authenticating: associatedData)
        }
        #expect(throws: AES256GCMError.authenticationFailure) { try open(Array(box.prefix(27)), with: key, authenticating: []) }
        // The key still works after the refusals.
        #expect(try open(box, with: key, authenticating: associatedData) == Array("someone@example.com".utf8))
    }

    @Test("every seal draws a fresh nonce")
    func freshNonces() throws {
        let key = try AES256GCMKey(keyBytes)
        var nonces = Set<[UInt8]>()
        for _ in 0..<10_000 { nonces.insert(Array(try seal([1, 2, 3], with: key, authenticating: []).prefix(12))) }
        #expect(nonces.count == 10_000)
    }

    @Test("a context set to another key opens what that key sealed, and no longer the first's")
    func rekeys() throws {
        let first = try AES256GCMKey(keyBytes)
        let second = try AES256GCMKey(SecureRandom.bytes(32))
        let fromFirst = try seal([1, 2, 3], with: first, authenticating: associatedData)
        let secondBytes = SecureRandom.bytes(32)
        let fromSecond = try seal([4, 5, 6], with: try AES256GCMKey(secondBytes), authenticating: associatedData)
        try secondBytes.withUnsafeBytes { try first.rekey($0) }
        #expect(try open(fromSecond, with: first, authenticating: associatedData) == [4, 5, 6])
        #expect(throws: AES256GCMError.authenticationFailure) { try open(fromFirst, with: first, authenticating: associatedData) }
        #expect(throws: AES256GCMError.authenticationFailure) { try open(fromSecond, with: second, authenticating: associatedData) }
    }

    @Test("a key is 32 bytes")
    func keySize() {
        #expect(throws: AES256GCMError.invalidKey) { try AES256GCMKey(SecureRandom.bytes(16)) }
    }
}
