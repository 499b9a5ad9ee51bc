/// `signing_key.published`: a new signing key, in the JWKS from now on, that starts signing at
/// `activatesAt` (once verifiers that cache the JWKS have fetched it) and replaces `replaces`,
/// which stays in the JWKS `retireAfterSeconds` longer (the longest a token it signed lives).
public struct SigningKeyPublished: Equatable, Sendable, Encodable {
    /// The key's JWT `kid`.
    public var keyId: String
    /// "RS256" or "ES256".
    public var algorithm: String
    /// The key signing when this one was published.
    public var replaces: String
    /// Unix ms.
    public var activatesAt: Int64
    public var retireAfterSeconds: Int64

    public init(keyId: String, algorithm: String, replaces: String, activatesAt: Int64, retireAfterSeconds: Int64) {
        self.keyId = keyId
        self.algorithm = algorithm
        self.replaces = replaces
        self.activatesAt = activatesAt
        self.retireAfterSeconds = retireAfterSeconds
    }
}

/// `signing_key.activated` (the key signs from now on; the one it replaces only verifies) and
/// `signing_key.withdrawn` (the key leaves the JWKS; no token it signed is still valid).
public struct SigningKeyStep: Equatable, Sendable, Encodable {
    public var keyId: String
    public init(keyId: String) { self.keyId = keyId }
}

/// Whether the node recording a rotation's steps holds a pending key's file: it does; it does
/// not, but another node may (it is being fetched); or no node that could be asked does.
public enum KeyFileAvailability: Sendable, Equatable {
    case held, sought, lost
}

/// The signing keys as the `cluster/signing-keys` stream leaves them, and the rules of a
/// rotation: one at a time; publish, then sign after the overlap, then withdraw the old key once
/// every token it signed has expired. Each step is an event, recorded by the leader when due.
/// Before any rotation the data directory's original key signs (`active` is `nil`).
public struct SigningKeyRing: Equatable, Sendable {
    public enum Status: Equatable, Sendable {
        /// Published, not yet signing.
        case pending(SigningKeyPublished)
        case signing
        /// Replaced: verifies until `withdrawAt` (Unix ms).
        case retiring(withdrawAt: Int64)
        case withdrawn
    }

    public private(set) var keys: [String: Status] = [:]
    /// Each published key's algorithm ("RS256", "ES256"), by kid.
    public private(set) var algorithms: [String: String] = [:]

    public init() {}

    /// The key that signs; `nil` before the first rotation (the original key).
    public var active: String? { keys.first { $0.value == .signing }?.key }

    /// Keys the JWKS publishes besides the active one (pending and retiring), by kid.
    public var alsoPublished: [String] {
        keys.filter {
            switch $0.value {
            case .pending, .retiring: true
            case .signing, .withdrawn: false
            }
        }.map(\.key).sorted()
    }

    public func isWithdrawn(_ keyId: String) -> Bool { keys[keyId] == .withdrawn }

    /// Whether the JWKS publishes `keyId`: pending, signing or retiring.
    public func isLive(_ keyId: String) -> Bool { keys[keyId].map { $0 != .withdrawn } ?? false }

    /// Every key the JWKS publishes, by kid.
    public var live: [String] { keys.keys.filter(isLive).sorted() }

    /// Replaced keys still verifying, the latest to go first.
    public var retiring: [String] {
        keys.compactMap { keyId, status in
            if case .retiring(let withdrawAt) = status { (keyId, withdrawAt) } else { nil }
        }.sorted { ($0.1, $0.0) > ($1.1, $1.0) }.map(\.0)
    }

    /// A kid as Hearth makes them: 40 lowercase hexadecimal digits (a file name can hold no other).
    public static func isKeyID(_ text: String) -> Bool {
        text.utf8.count == 40 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The rotation under way, if any.
    public var pending: SigningKeyPublished? {
        for status in keys.values { if case .pending(let published) = status { return published } }
        return nil
    }

    /// Folds one event of the stream, recorded at `at` (Unix ms).
    public mutating func apply(_ payload: EventPayload, at: Int64) {
        switch payload {
        case .signingKeyPublished(let published):
            if keys[published.replaces] == nil { keys[published.replaces] = .signing }
            keys[published.keyId] = .pending(published)
            algorithms[published.keyId] = published.algorithm
        case .signingKeyActivated(let step):
            guard case .pending(let published) = keys[step.keyId] else { return }
            keys[step.keyId] = .signing
            keys[published.replaces] = .retiring(withdrawAt: at + published.retireAfterSeconds * 1000)
        case .signingKeyWithdrawn(let step):
            keys[step.keyId] = .withdrawn
        default:
            break
        }
    }

    /// Starts a rotation to `published`, whose `replaces` must be the key signing now
    /// (`signing`, the original key's kid before any rotation).
    public func rotate(to published: SigningKeyPublished, signing: String) throws(KeyRotationError) -> [EventPayload] {
        if let pending { throw .rotationUnderway(pending.keyId) }
        guard Self.isKeyID(published.keyId) else { throw .malformedKeyID(published.keyId) }
        guard keys[published.keyId] == nil, published.keyId != signing else { throw .knownKey(published.keyId) }
        guard published.replaces == (active ?? signing) else { throw .notSigning(published.replaces) }
        guard published.retireAfterSeconds >= 0 else { throw .negativePeriod }
        return [.signingKeyPublished(published)]
    }

    /// The steps due at `now`: the pending key's activation, then any replaced key's
    /// withdrawal. `file` says whether the recording node holds a key's file. A pending key it
    /// does not hold (a new leader elected before it fetched the key, the node that made it now
    /// gone) is not activated: while another node may still hold it (`.sought`) the step waits;
    /// once none does (`.lost`) the key is withdrawn instead, abandoning the rotation, which may
    /// then be started again.
    public func due(at now: Int64, file: (String) -> KeyFileAvailability = { _ in .held }) -> [EventPayload] {
        var steps: [EventPayload] = []
        for (keyId, status) in keys.sorted(by: { $0.key < $1.key }) {
            switch status {
            case .pending(let published) where published.activatesAt <= now:
                switch file(keyId) {
                case .held: steps.append(.signingKeyActivated(SigningKeyStep(keyId: keyId)))
                case .sought: break
                case .lost: steps.append(.signingKeyWithdrawn(SigningKeyStep(keyId: keyId)))
                }
            case .retiring(let withdrawAt) where withdrawAt <= now:
                steps.append(.signingKeyWithdrawn(SigningKeyStep(keyId: keyId)))
            default:
                break
            }
        }
        return steps
    }

    /// When the next step falls due (Unix ms), if one is planned.
    /// The pending keys due at `now` whose activation waits, for the file another node may
    /// still hold (`.sought`): `due` records nothing for them meanwhile.
    public func awaitingFile(at now: Int64, file: (String) -> KeyFileAvailability) -> [String] {
        keys.sorted { $0.key < $1.key }.compactMap { keyId, status in
            guard case .pending(let published) = status, published.activatesAt <= now, file(keyId) == .sought else { return nil }
            return keyId
        }
    }

    public var nextStepAt: Int64? {
        keys.values.compactMap {
            switch $0 {
            case .pending(let published): published.activatesAt
            case .retiring(let withdrawAt): withdrawAt
            case .signing, .withdrawn: nil
            }
        }.min()
    }
}

public enum KeyRotationError: Error, Equatable, Sendable, CustomStringConvertible {
    case rotationUnderway(String)
    case knownKey(String)
    case notSigning(String)
    case negativePeriod
    case malformedKeyID(String)

    public var description: String {
        switch self {
        case .rotationUnderway(let keyId): "a rotation is under way (key \(keyId) is published, not yet signing): one at a time"
        case .knownKey(let keyId): "key \(keyId) was published before"
        case .notSigning(let keyId): "key \(keyId) is not the one signing: the rotation was planned on a stale view"
        case .negativePeriod: "the retirement period must not be negative"
        case .malformedKeyID(let keyId): "key id \(keyId) is not 40 hexadecimal digits"
        }
    }
}
