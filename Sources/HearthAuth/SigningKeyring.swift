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
        var signing: SigningKey
        var byID: [String: SigningKey]
        /// The stream version these keys follow; `nil` before the first refresh.
        var version: UInt64?
    }

    /// The data directory's first key (`signing-key-<alg>.pem`): it signs until a rotation's
    /// first key activates.
    public let original: SigningKey
    private let keys: Mutex<Keys>

    public init(original: SigningKey) {
        self.original = original
        keys = Mutex(Keys(signing: original, byID: [original.keyID: original]))
    }

    /// The key new tokens are signed with.
    public var signing: SigningKey { keys.withLock { $0.signing } }

    /// A published key, by kid: the keys tokens are verified with.
    public func key(id: String) -> SigningKey? { keys.withLock { $0.byID[id] } }

    /// The JWKS: the signing key first, then the others (published ahead of signing, or
    /// replaced and still verifying), by kid.
    public var published: [SigningKey] {
        keys.withLock { keys in
            [keys.signing] + keys.byID.values.filter { $0.keyID != keys.signing.keyID }.sorted { $0.keyID < $1.keyID }
        }
    }

    /// What a refresh found: the keys whose files this node lacks (a follower fetches them from
    /// its leader), and whether anything changed.
    public struct Refresh: Sendable, Equatable {
        public var missing: [String] = []
        public var changed = false
    }

    /// Follows the ledger's rotation steps: reads the stream when its version moved (or when
    /// files were missing), loads the keys it publishes from the data directory, and removes
    /// the files of rotated keys it withdrew. A key whose file is missing is left out (and, if it
    /// should sign, the previous key signs on) until a later refresh finds it.
    @discardableResult
    public func refresh(from store: AccountStore) throws -> Refresh {
        let version = try store.signingKeyVersion()
        if keys.withLock({ $0.version }) == version { return Refresh() }
        let (ring, _) = try store.signingKeyRing()
        var refresh = Refresh(changed: true)
        var byID: [String: SigningKey] = [:]
        let originalLive = ring.keys[original.keyID].map { $0 != .withdrawn } ?? (ring.active == nil)
        if originalLive { byID[original.keyID] = original }
        for keyID in ring.alsoPublished + [ring.active].compactMap({ $0 }) where keyID != original.keyID {
            guard let algorithm = ring.algorithms[keyID].flatMap(SigningKey.Algorithm.init(rawValue:)) else { continue }
            let path = store.directory.signingKeyFile(keyID: keyID)
            guard access(path, F_OK) == 0 else {
                refresh.missing.append(keyID)
                continue
            }
            let key = try SigningKey.load(at: path, algorithm: algorithm)
            // Not the key the ledger names (a copy gone wrong): never published, never signing.
            guard key.keyID == keyID else {
                unlink(path)
                refresh.missing.append(keyID)
                continue
            }
            byID[keyID] = key
        }
        for (keyID, status) in ring.keys where status == .withdrawn && keyID != original.keyID {
            unlink(store.directory.signingKeyFile(keyID: keyID))
        }
        keys.withLock { keys in
            let signing = ring.active.flatMap { byID[$0] } ?? (ring.active == nil ? original : keys.signing)
            byID[signing.keyID] = signing
            keys = Keys(signing: signing, byID: byID, version: refresh.missing.isEmpty ? version : nil)
        }
        return refresh
    }
}
