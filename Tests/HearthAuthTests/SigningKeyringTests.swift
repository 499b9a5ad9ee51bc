import Foundation
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import Testing

/// A node's keyring follows the ledger's rotation steps, and never publishes or signs with a key
/// the ledger does not call live, whatever files the node has or lacks.
@Suite("signing keys: the keyring follows the ledger")
struct SigningKeyringTests {
    static func record(_ payload: EventPayload, on test: TestStore, at time: Int64) throws {
        try test.store.appendAsRecorded([payload], to: .cluster(.signingKeys), at: time)
    }

    @Test("published, then signing, then the old key withdrawn; a missing file falls back to a live key, or to none")
    func followsTheLedger() throws {
        let test = try TestStore()
        defer { try? test.close() }
        let original = try SigningKey.generate(.es256)
        let keyring = SigningKeyring(original: original)
        try keyring.refresh(from: test.store)
        #expect(keyring.signing?.keyID == original.keyID && keyring.published.map(\.keyID) == [original.keyID])

        let rotated = try SigningKey.create(at: test.dataDirectory.signingKeyFile(keyID: "pending"), algorithm: .es256)
        let path = test.dataDirectory.signingKeyFile(keyID: rotated.keyID)
        try FileManager.default.moveItem(atPath: test.dataDirectory.signingKeyFile(keyID: "pending"), toPath: path)
        let published = SigningKeyPublished(
            keyId: rotated.keyID, algorithm: "ES256", replaces: original.keyID, activatesAt: 5_000, retireAfterSeconds: 60)
        try Self.record(.signingKeyPublished(published), on: test, at: 1_000)
        #expect(try keyring.refresh(from: test.store).missing.isEmpty)
        #expect(keyring.signing?.keyID == original.keyID)
        #expect(keyring.published.map(\.keyID) == [original.keyID, rotated.keyID])

        try Self.record(.signingKeyActivated(SigningKeyStep(keyId: rotated.keyID)), on: test, at: 5_000)
        #expect(try keyring.refresh(from: test.store).signingChanged == .some(rotated.keyID))
        #expect(keyring.published.map(\.keyID) == [rotated.keyID, original.keyID])

        // A node that lacks the signing key's file (a follower yet to fetch it) signs with the
        // retiring key, which every node still publishes; an unreadable file is removed.
        try Array("not a key".utf8).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
        let restarted = SigningKeyring(original: original)
        #expect(try restarted.refresh(from: test.store).missing == [rotated.keyID])
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(restarted.signing?.keyID == original.keyID && restarted.published.map(\.keyID) == [original.keyID])

        // Once the old key is withdrawn, it neither signs nor verifies: with the new key's file
        // missing, this node has no key to sign with, and says so.
        try Self.record(.signingKeyWithdrawn(SigningKeyStep(keyId: original.keyID)), on: test, at: 65_000)
        #expect(try restarted.refresh(from: test.store).missing == [rotated.keyID])
        #expect(restarted.signing == nil && restarted.published.isEmpty && restarted.key(id: original.keyID) == nil)
        #expect(throws: FirebaseError.signingKeyUnavailable) { try TokenIssuer(keyring: restarted).signingKey() }

        // The file back (fetched), the node signs with the ledger's key again.
        try rotated.pem.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try restarted.refresh(from: test.store).missing.isEmpty)
        #expect(restarted.signing?.keyID == rotated.keyID && restarted.published.map(\.keyID) == [rotated.keyID])
    }

    @Test("a rotated key file no record names is removed once older than the grace; a fresh one (a rotation under way) stays")
    func orphans() throws {
        let test = try TestStore()
        defer { try? test.close() }
        let stale = try SigningKey.generate(.es256)
        let fresh = try SigningKey.generate(.es256)
        let stalePath = test.dataDirectory.signingKeyFile(keyID: stale.keyID)
        let freshPath = test.dataDirectory.signingKeyFile(keyID: fresh.keyID)
        try stale.pem.write(toFile: stalePath, atomically: true, encoding: .utf8)
        try fresh.pem.write(toFile: freshPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-SigningKeyring.orphanGrace - 60)], ofItemAtPath: stalePath)
        let keyring = SigningKeyring(original: try SigningKey.generate(.es256))
        #expect(try keyring.refresh(from: test.store).orphansRemoved == [stale.keyID])
        #expect(!FileManager.default.fileExists(atPath: stalePath) && FileManager.default.fileExists(atPath: freshPath))
        #expect(keyring.published.count == 1 && keyring.key(id: fresh.keyID) == nil)
    }
}
