/// A stored password hash. Hearth hashes with scrypt; imported accounts keep their original
/// algorithm until the next successful sign-in re-hashes them.
public struct PasswordHash: Equatable, Hashable, Sendable {
    public var algorithm: Algorithm
    public var hash: [UInt8]
    public var salt: [UInt8]
    /// Work factors; which ones apply depends on the algorithm (scrypt: N as log2 in memoryCost, r, p).
    public var rounds: Int?
    public var memoryCost: Int?
    public var blockSize: Int?
    public var parallelization: Int?
    public var keyLength: Int?
    /// The secret of the system the hash came from: the HMAC key, or Firebase scrypt's signer key.
    public var key: [UInt8]?
    /// Firebase scrypt's salt separator, appended to the salt.
    public var saltSeparator: [UInt8]?
    /// Salted digests (HMAC): the password comes before the salt (Firebase's default is salt first).
    public var passwordFirst: Bool

    public init(
        algorithm: Algorithm, hash: [UInt8], salt: [UInt8], rounds: Int? = nil, memoryCost: Int? = nil,
        blockSize: Int? = nil, parallelization: Int? = nil, keyLength: Int? = nil, key: [UInt8]? = nil,
        saltSeparator: [UInt8]? = nil, passwordFirst: Bool = false
    ) {
        self.algorithm = algorithm
        self.hash = hash
        self.salt = salt
        self.rounds = rounds
        self.memoryCost = memoryCost
        self.blockSize = blockSize
        self.parallelization = parallelization
        self.keyLength = keyLength
        self.key = key
        self.saltSeparator = saltSeparator
        self.passwordFirst = passwordFirst
    }
}

/// Audit output shows how a password is hashed, never the hash, the salt or the key.
extension PasswordHash: Encodable {
    enum CodingKeys: String, CodingKey {
        case algorithm, rounds, memoryCost, blockSize, parallelization, keyLength, passwordFirst
    }
}

/// A federated identity linked to an account (Firebase `providerUserInfo`).
public struct ProviderLink: Equatable, Hashable, Sendable, Encodable {
    /// "google.com", "facebook.com", "github.com", "yahoo.com", "apple.com", ...
    public var providerId: ProviderID
    /// The user's id at the identity provider (`rawId`, `federatedId`).
    public var federatedId: String
    public var email: String?
    public var displayName: String?
    public var photoUrl: String?
    public var screenName: String?

    public init(
        providerId: ProviderID, federatedId: String, email: String? = nil, displayName: String? = nil,
        photoUrl: String? = nil, screenName: String? = nil
    ) {
        self.providerId = providerId
        self.federatedId = federatedId
        self.email = email
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.screenName = screenName
    }
}

/// One account as the fold of its own stream (`evolve`). Times are Unix milliseconds, except
/// `validSince`, which is in seconds as in Firebase.
public struct Account: Equatable, Sendable, Encodable {
    public var uid: UserID
    public var email: String?
    public var emailVerified = false
    /// The address the account had before its email first changed (Firebase's `initialEmail`).
    public var initialEmail: String?
    public var password: PasswordHash?
    public var passwordUpdatedAt: Int64?
    public var displayName: String?
    public var photoUrl: String?
    public var phoneNumber: String?
    /// Federated providers, kept sorted by provider id.
    public var providers: [ProviderLink] = []
    /// Custom claims as the JSON object text the admin set.
    public var customClaims: String?
    public var disabled = false
    /// Created anonymously and never upgraded. Once upgraded, never anonymous again.
    public var isAnonymous = false
    /// Has completed an email-link sign-in (`emailLink` sign-in method).
    public var emailLinkSignIn = false
    /// Has signed in with a custom token (Firebase `customAuth`).
    public var customAuth = false
    public var createdAt: Int64
    public var lastSignInAt: Int64?
    /// Tokens issued before this second are rejected.
    public var validSince: Int64
    /// Hashes (hex SHA-256) of refresh tokens that are live for this account, sorted.
    public var refreshTokens: [String] = []
    /// Enrolled second factors, oldest first (`SecondFactorRules`).
    public var secondFactors: [SecondFactor] = []

    public init(uid: UserID, createdAt: Int64) {
        self.uid = uid
        self.createdAt = createdAt
        self.validSince = createdAt / 1000
    }

    public func secondFactor(_ enrollmentId: String) -> SecondFactor? {
        secondFactors.first { $0.enrollmentId == enrollmentId }
    }

    public func provider(_ providerId: ProviderID) -> ProviderLink? {
        providers.first { $0.providerId == providerId }
    }

    /// Sign-in methods in `createAuthUri` terms: `password`, `emailLink`, then provider ids.
    public var signInMethods: [SignInMethod] {
        var methods: [SignInMethod] = []
        if password != nil { methods.append(.password) }
        if emailLinkSignIn { methods.append(.emailLink) }
        return methods + providers.map { .provider($0.providerId) }
    }

    /// Whether the account can sign in by anything other than an anonymous session.
    public var hasSignInMethod: Bool {
        password != nil || emailLinkSignIn || customAuth || !providers.isEmpty || phoneNumber != nil
    }
}

/// Emails match case-insensitively; Hearth stores them lowercased, as the emulator does.
/// The orders accounts are listed in, besides uid order: the most recent first.
public enum AccountListOrder: String, Sendable, CaseIterable {
    case creation, lastSignIn
}

public func normalizeEmail(_ email: String) -> String {
    email.lowercased()
}
