import HearthDomain
import HearthStore

/// Signing-key rotation (`hearth keys rotate`, through the leader): a new key is made and
/// published in the JWKS first, signs once verifiers that cache the JWKS have fetched it
/// (`overlapSeconds`, by default the JWKS's `max-age`), and the key it replaces leaves the JWKS
/// once everything it signed has expired (`retireAfterSeconds`, by default a session cookie's
/// longest life, two weeks, and the clock skew verifiers allow). Each step is an event in the
/// ledger; the leader records the later two when due (`recordDueSteps`), and every node's
/// keyring follows.
public struct KeyService: Sendable {
    let context: AuthContext

    public init(context: AuthContext) { self.context = context }

    /// How long after publication a new key starts signing, by default: the JWKS's `max-age`.
    public static let defaultOverlapSeconds = TokenIssuer.keySetMaxAge
    /// How long a replaced key stays published after its successor signs, by default: the
    /// longest-lived thing it signs (a session cookie, up to two weeks) and the clock skew.
    public static let defaultRetireAfterSeconds = TokenIssuer.longestSessionCookie + TokenIssuer.allowedClockSkew
    /// The longest either period may be.
    public static let longestPeriodSeconds: Int64 = 30 * 24 * 3600

    public struct Status: Sendable, Equatable {
        /// `nil` while this node holds no live key (it is fetching one).
        public var signing: String?
        public var published: [String]
        public var pending: SigningKeyPublished?
        /// When the next step falls due (Unix ms).
        public var nextStepAt: Int64?
    }

    /// The keys now: the one signing, those the JWKS publishes, a rotation under way.
    public func status() throws -> Status {
        try context.tokens.keyring.refresh(from: context.store)
        let ring = try context.store.signingKeyRing().ring
        return Status(
            signing: context.tokens.keyring.signing?.keyID, published: context.tokens.keyring.published.map(\.keyID),
            pending: ring.pending, nextStepAt: ring.nextStepAt)
    }

    /// Starts a rotation: a new key of the configured algorithm, written to the data directory,
    /// then published. Refused while one is under way, and (as every write) on a node that
    /// does not lead.
    public func rotate(overlapSeconds: Int64?, retireAfterSeconds: Int64?, metadata: Metadata) async throws -> SigningKeyPublished {
        try await context.inFirebaseTerms { try await publish(overlapSeconds, retireAfterSeconds, metadata) }
    }

    private func publish(_ overlapSeconds: Int64?, _ retireAfterSeconds: Int64?, _ metadata: Metadata) async throws
        -> SigningKeyPublished
    {
        let overlap = overlapSeconds ?? Self.defaultOverlapSeconds
        let retireAfter = retireAfterSeconds ?? Self.defaultRetireAfterSeconds
        guard (0...Self.longestPeriodSeconds).contains(overlap), (0...Self.longestPeriodSeconds).contains(retireAfter) else {
            throw FirebaseError.invalidArgument("the overlap and the retirement period are 0 to \(Self.longestPeriodSeconds) seconds")
        }
        try context.store.writeAuthority.check()
        let keyring = context.tokens.keyring
        try keyring.refresh(from: context.store)
        if let pending = try context.store.signingKeyRing().ring.pending {
            throw FirebaseError.bad("ROTATION_UNDER_WAY : key \(pending.keyId) is published and not yet signing; one rotation at a time")
        }
        guard let signing = keyring.signing else { throw FirebaseError.signingKeyUnavailable }
        let algorithm = keyring.original.algorithm
        let key = try SigningKey.generate(algorithm)
        let path = context.store.directory.signingKeyFile(keyID: key.keyID)
        // On disk (fsynced) before the ledger names it: a follower that applies the event fetches it from here.
        guard KeyFile.writeNew(path, Array(key.pem.utf8)) else { throw SigningKeyError.cannotWrite(path) }
        let published = SigningKeyPublished(
            keyId: key.keyID, algorithm: algorithm.rawValue, replaces: signing.keyID, activatesAt: context.now + overlap * 1000,
            retireAfterSeconds: retireAfter)
        do {
            try await context.store.publishSigningKey(published, signing: signing.keyID, metadata: metadata)
        } catch let error as KeyRotationError {
            KeyFile.remove(path)
            throw FirebaseError.bad("ROTATION_REFUSED : \(error)")
        } catch {
            // Unless it committed (and only waits for the followers), the key is no one's; when
            // that can not be told, the file stays (a published key's file is never lost).
            if let ring = try? context.store.signingKeyRing().ring, ring.keys[key.keyID] == nil { KeyFile.remove(path) }
            throw error
        }
        try keyring.refresh(from: context.store)
        return published
    }

    /// What `recordDueSteps` left undone: the rotations it abandoned, and those whose due
    /// activation waits for a key file another node may hold (the replaced key signs meanwhile).
    public struct UndoneSteps: Sendable, Equatable {
        public var abandoned: [String] = []
        public var waiting: [String] = []

        public init(abandoned: [String] = [], waiting: [String] = []) {
            self.abandoned = abandoned
            self.waiting = waiting
        }
    }

    /// Records the steps due now, if any, and follows them (the leader's scheduler calls this).
    /// A pending key whose file this node lacks is not activated (it could not sign with it):
    /// while it is among `sought` (another node may hold it, and is being asked) the step
    /// waits; otherwise the key is withdrawn.
    @discardableResult
    public func recordDueSteps(sought: Set<String> = []) async throws -> UndoneSteps {
        let ring = try context.store.signingKeyRing().ring
        guard let next = ring.nextStepAt, next <= context.now else { return UndoneSteps() }
        let directory = context.store.directory
        let file: @Sendable (String) -> KeyFileAvailability = { keyID in
            if SigningKeyRing.isKeyID(keyID) && KeyFile.exists(directory.signingKeyFile(keyID: keyID)) { return .held }
            return sought.contains(keyID) ? .sought : .lost
        }
        let recorded = try await context.store.recordDueKeySteps(file: file)
        try context.tokens.keyring.refresh(from: context.store)
        let abandoned = recorded.compactMap { event -> String? in
            guard case .signingKeyWithdrawn(let step) = event.payload, ring.pending?.keyId == step.keyId else { return nil }
            return step.keyId
        }
        return UndoneSteps(abandoned: abandoned, waiting: ring.awaitingFile(at: context.now, file: file))
    }
}
