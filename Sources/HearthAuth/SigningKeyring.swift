import Foundation
import HearthDomain
import HearthStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The signing keys a node holds: the one that signs, and every one the JWKS publishes (which
/// any node's tokens may be signed with). It starts as the data directory's original key alone
/// and follows the ledger's `cluster/signing-keys` stream (`refresh`), on the leader that records
/// a rotation's steps and on the followers that replicate them alike, so every node signs with
/// the same key and publishes the same set.
public final class SigningKeyring: Sendable {
    private struct Keys: Sendable {
        /// `nil` while no key the ledger calls live is on this node (tokens are refused).
        var signing: SigningKey?
        var byID: [String: SigningKey]
        /// The stream version these keys follow; `nil` before the first refresh, and while a
        /// key file is missing (so the next refresh looks again).
        var version: UInt64?
    }

    /// The data directory's first key (`signing-key-<alg>.pem`): it signs until a rotation's
    /// first key activates.
    public let original: SigningKey
    private let keys: Mutex<Keys>
    /// One refresh at a time: a slower one must never store an older view over a newer one.
    private let refreshing = Mutex(())
    private let withdrawn = Atomic<UInt64>(0)

    /// How many times a key left this keyring: a cached verification made before the latest
    /// one is made again (`TokenIssuer.verifyIDToken`).
    public var withdrawals: UInt64 { withdrawn.load(ordering: .acquiring) }

    public init(original: SigningKey) {
        self.original = original
        keys = Mutex(Keys(signing: original, byID: [original.keyID: original]))
    }

    /// The key new tokens are signed with; `nil` when this node holds none the ledger calls live.
    public var signing: SigningKey? { keys.withLock { $0.signing } }

    /// A published key, by kid: the keys tokens are verified with.
    public func key(id: String) -> SigningKey? { keys.withLock { $0.byID[id] } }

    /// The JWKS: the signing key first, then the others (published ahead of signing, or
    /// replaced and still verifying), by kid.
    public var published: [SigningKey] {
        keys.withLock { keys in
            let others = keys.byID.values.filter { $0.keyID != keys.signing?.keyID }.sorted { $0.keyID < $1.keyID }
            return (keys.signing.map { [$0] } ?? []) + others
        }
    }

    /// What a refresh found: the keys the ledger publishes whose files this node lacks (a
    /// follower fetches them from its leader), and the key signing when it changed.
    public struct Refresh: Sendable, Equatable {
        public var missing: [String] = []
        public var signingChanged: String?? = nil
        /// Rotated key files the ledger names no key for, removed (`orphanGrace`).
        public var orphansRemoved: [String] = []
    }

    /// How old a key file the ledger does not name must be before a refresh removes it: a
    /// rotation writes its file a moment before the record that names it.
    public static let orphanGrace: TimeInterval = 600

    /// Follows the ledger's rotation steps: reads the stream when its version moved (or while
    /// files were missing), loads the keys it calls live from the data directory, and removes
    /// the files of rotated keys it withdrew. Only a key the ledger calls live (the original
    /// before any rotation; a published, signing or retiring one after) is ever published or
    /// signs. A key whose file is missing or unreadable is left out; if it should sign, a
    /// retiring key this node holds signs meanwhile, else none.
    @discardableResult
    public func refresh(from store: AccountStore) throws -> Refresh {
        try refreshing.withLock { _ in try refreshAlone(from: store) }
    }

    /// Removes the rotated key files no record names (a rotation whose record was dropped with
    /// an unacknowledged tail, or never committed), once older than `orphanGrace`: a private key
    /// no one may use must not live on in the data directory and its backups.
    private func removeOrphans(in directory: DataDirectory, ring: SigningKeyRing) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix("signing-key-") && name.hasSuffix(".pem") {
            let keyID = String(name.dropFirst("signing-key-".count).dropLast(".pem".count))
            guard SigningKeyRing.isKeyID(keyID), ring.keys[keyID] == nil, keyID != original.keyID else { continue }
            let path = directory.signingKeyFile(keyID: keyID)
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                Date().timeIntervalSince(modified) > Self.orphanGrace
            else { continue }
            unlink(path)
            removed.append(keyID)
        }
        return removed
    }

    private func refreshAlone(from store: AccountStore) throws -> Refresh {
        if keys.withLock({ $0.version }) == (try store.signingKeyVersion()) { return Refresh() }
        let (ring, version) = try store.signingKeyRing()
        var refresh = Refresh()
        var byID: [String: SigningKey] = [:]
        if ring.isLive(original.keyID) || ring.keys.isEmpty { byID[original.keyID] = original }
        for keyID in ring.live where keyID != original.keyID {
            guard let algorithm = ring.algorithms[keyID].flatMap(SigningKey.Algorithm.init(rawValue:)) else { continue }
            let path = store.directory.signingKeyFile(keyID: keyID)
            guard access(path, F_OK) == 0 else {
                refresh.missing.append(keyID)
                continue
            }
            // Unreadable, or not the key the ledger names (a copy gone wrong): removed, fetched again.
            guard let key = try? SigningKey.load(at: path, algorithm: algorithm), key.keyID == keyID else {
                unlink(path)
                refresh.missing.append(keyID)
                continue
            }
            byID[keyID] = key
        }
        for (keyID, status) in ring.keys where status == .withdrawn && keyID != original.keyID && SigningKeyRing.isKeyID(keyID) {
            unlink(store.directory.signingKeyFile(keyID: keyID))
        }
        refresh.orphansRemoved = removeOrphans(in: store.directory, ring: ring)
        let active = ring.active ?? original.keyID
        let signing = byID[active] ?? ring.retiring.lazy.compactMap { byID[$0] }.first
        let removed = keys.withLock { keys in
            if keys.signing?.keyID != signing?.keyID { refresh.signingChanged = .some(signing?.keyID) }
            let removed = keys.byID.keys.contains { byID[$0] == nil }
            keys = Keys(signing: signing, byID: byID, version: refresh.missing.isEmpty ? version : nil)
            return removed
        }
        if removed { withdrawn.add(1, ordering: .releasing) }
        return refresh
    }
}
