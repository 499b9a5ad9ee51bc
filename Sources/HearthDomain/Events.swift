/// Events are past-tense facts. The stream (which account, project or code) lives in the
/// envelope, not in the payload; times are Unix milliseconds unless a name says otherwise.
public struct Event: Equatable, Sendable {
    public var stream: StreamID
    public var payload: EventPayload

    public init(_ stream: StreamID, _ payload: EventPayload) {
        self.stream = stream
        self.payload = payload
    }
}

public enum EventPayload: Equatable, Sendable {
    // Boxed, like the other large or rare payloads: an event is then the size of a small one,
    // which a rebuild moves a million times.
    indirect case accountCreated(AccountCreated)
    case signInRecorded(SignInRecorded)
    indirect case providerLinked(ProviderLinked)
    case providerUnlinked(ProviderUnlinked)
    indirect case passwordSet(PasswordSet)
    case passwordRemoved(PasswordRemoved)
    case emailVerified(EmailVerified)
    case emailChanged(EmailChanged)
    case profileUpdated(ProfileUpdated)
    case customClaimsSet(CustomClaimsSet)
    case accountDisabled
    case accountEnabled
    case sessionsRevoked(SessionsRevoked)
    case refreshTokenIssued(RefreshTokenIssued)
    case refreshTokenRevoked(RefreshTokenRevoked)
    case accountDeleted(AccountDeleted)
    case anonymousPurged(AnonymousPurged)
    /// An operator forgot the account's personal data on request; the account ends with it.
    case accountErased(AccountErased)
    /// A second factor enrolled (its secret sealed, `SecondFactor`).
    indirect case secondFactorEnrolled(SecondFactor)
    case secondFactorWithdrawn(SecondFactorWithdrawn)
    /// A second factor's code was accepted: the sign-in it completed follows in the same write.
    case secondFactorUsed(SecondFactorUsed)
    indirect case oobCodeIssued(OOBCodeIssued)
    case oobCodeConsumed
    /// A code expired unused: the sweep forgets its addresses (`PersonalData.forgets`).
    case oobCodeExpired
    indirect case projectConfigChanged(ProjectConfigChange)
    /// A provider's whole configuration, created or changed (its secret sealed or referenced).
    indirect case identityProviderSet(IdentityProviderConfig)
    case identityProviderDeleted(IdentityProviderDeleted)
    /// A node began leading a term (`ClusterTerms`).
    indirect case termStarted(TermStarted)
    /// The steps of a signing-key rotation (`SigningKeyRing`).
    indirect case signingKeyPublished(SigningKeyPublished)
    case signingKeyActivated(SigningKeyStep)
    case signingKeyWithdrawn(SigningKeyStep)

    public var type: EventType {
        switch self {
        case .accountCreated: .accountCreated
        case .signInRecorded: .signInRecorded
        case .providerLinked: .providerLinked
        case .providerUnlinked: .providerUnlinked
        case .passwordSet: .passwordSet
        case .passwordRemoved: .passwordRemoved
        case .emailVerified: .emailVerified
        case .emailChanged: .emailChanged
        case .profileUpdated: .profileUpdated
        case .customClaimsSet: .customClaimsSet
        case .accountDisabled: .accountDisabled
        case .accountEnabled: .accountEnabled
        case .sessionsRevoked: .sessionsRevoked
        case .refreshTokenIssued(let issued): issued.namesAccount ? .refreshTokenIssued : .refreshTokenIssuedV1
        case .refreshTokenRevoked: .refreshTokenRevoked
        case .accountDeleted: .accountDeleted
        case .anonymousPurged: .anonymousPurged
        case .accountErased: .accountErased
        case .secondFactorEnrolled: .secondFactorEnrolled
        case .secondFactorWithdrawn: .secondFactorWithdrawn
        case .secondFactorUsed: .secondFactorUsed
        case .oobCodeIssued: .oobCodeIssued
        case .oobCodeConsumed: .oobCodeConsumed
        case .oobCodeExpired: .oobCodeExpired
        case .projectConfigChanged: .projectConfigChanged
        case .identityProviderSet: .identityProviderSet
        case .identityProviderDeleted: .identityProviderDeleted
        case .termStarted: .termStarted
        case .signingKeyPublished: .signingKeyPublished
        case .signingKeyActivated: .signingKeyActivated
        case .signingKeyWithdrawn: .signingKeyWithdrawn
        }
    }
}

public enum CreationMethod: String, Sendable, Encodable, CaseIterable {
    case anonymous, password
    case emailLink = "email_link"
    case federated, admin, `import`
    /// A custom token minted by the app's backend (`signInWithCustomToken`).
    case custom
}

public struct AccountCreated: Equatable, Sendable, Encodable {
    public var method: CreationMethod
    /// Creation time; the event time except for imports, which keep the original.
    public var createdAt: Int64
    public var email: String?
    public var emailVerified: Bool
    public var password: PasswordHash?
    public var displayName: String?
    public var photoUrl: String?
    public var phoneNumber: String?
    public var providers: [ProviderLink]
    public var customClaims: String?
    public var disabled: Bool
    /// Imports only: when the user last signed in at the previous system.
    public var lastSignInAt: Int64?

    public init(
        method: CreationMethod, createdAt: Int64, email: String? = nil, emailVerified: Bool = false,
        password: PasswordHash? = nil, displayName: String? = nil, photoUrl: String? = nil,
        phoneNumber: String? = nil, providers: [ProviderLink] = [], customClaims: String? = nil,
        disabled: Bool = false, lastSignInAt: Int64? = nil
    ) {
        self.method = method
        self.createdAt = createdAt
        self.email = email
        self.emailVerified = emailVerified
        self.password = password
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
        self.providers = providers
        self.customClaims = customClaims
        self.disabled = disabled
        self.lastSignInAt = lastSignInAt
    }
}

public struct SignInRecorded: Equatable, Sendable, Encodable {
    public var method: SignInMethod
    public init(method: SignInMethod) { self.method = method }
}

public struct ProviderLinked: Equatable, Sendable, Encodable {
    public var provider: ProviderLink
    public init(provider: ProviderLink) { self.provider = provider }
}

public struct ProviderUnlinked: Equatable, Sendable, Encodable {
    public enum Reason: String, Sendable, Encodable, CaseIterable {
        /// The user or an administrator unlinked it.
        case unlinked
        /// Email-link sign-in proved the account's unverified email: a provider linked while
        /// it was unverified, possibly by an impostor, must not survive it (Firebase removes
        /// every sign-in method that was not verified).
        case emailLinkVerified = "email_link_verified"
        /// A trusted identity provider vouched for the unverified email, with the same effect.
        case providerVerified = "provider_verified"
    }

    public var providerId: ProviderID
    public var reason: Reason
    public init(providerId: ProviderID, reason: Reason = .unlinked) {
        self.providerId = providerId
        self.reason = reason
    }
}

public struct PasswordSet: Equatable, Sendable, Encodable {
    public enum Reason: String, Sendable, Encodable, CaseIterable {
        /// The account had no password (e.g. an anonymous user linking email+password).
        case initial
        case changed
        case reset
        /// A successful sign-in upgraded an imported or outdated hash to current parameters.
        case rehashed
    }

    public var password: PasswordHash
    public var reason: Reason

    public init(password: PasswordHash, reason: Reason) {
        self.password = password
        self.reason = reason
    }
}

public struct PasswordRemoved: Equatable, Sendable, Encodable {
    public enum Reason: String, Sendable, Encodable, CaseIterable {
        /// Email-link sign-in proved ownership of the email; an unverified password set by
        /// someone else before must not survive it (Firebase removes it, so an impostor who
        /// created the account can not sign in with it again).
        case emailLinkVerified = "email_link_verified"
        /// A trusted identity provider vouched for the email (signInWithIdp).
        case providerVerified = "provider_verified"
        case unlinked
    }

    public var reason: Reason
    public init(reason: Reason) { self.reason = reason }
}

public struct EmailVerified: Equatable, Sendable, Encodable {
    public var email: String
    public init(email: String) { self.email = email }
}

public struct EmailChanged: Equatable, Sendable, Encodable {
    public var email: String?
    public var verified: Bool

    public init(email: String?, verified: Bool) {
        self.email = email
        self.verified = verified
    }
}

public struct ProfileUpdated: Equatable, Sendable, Encodable {
    public enum Field: String, Sendable, Encodable, CaseIterable {
        case displayName, photoUrl, phoneNumber
    }

    public var displayName: String?
    public var photoUrl: String?
    public var phoneNumber: String?
    /// Fields removed; a field is either set or removed, never both.
    public var deleted: [Field]

    public init(displayName: String? = nil, photoUrl: String? = nil, phoneNumber: String? = nil, deleted: [Field] = []) {
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.phoneNumber = phoneNumber
        self.deleted = deleted
    }
}

public struct CustomClaimsSet: Equatable, Sendable, Encodable {
    /// JSON object text; `nil` clears the claims.
    public var claims: String?
    public init(claims: String?) { self.claims = claims }
}

public struct SessionsRevoked: Equatable, Sendable, Encodable {
    public enum Reason: String, Sendable, Encodable, CaseIterable {
        case admin
        case passwordChanged = "password_changed"
        case emailLinkVerified = "email_link_verified"
        case providerVerified = "provider_verified"
        case emailChanged = "email_changed"
        /// An account is enabled again: sessions from before it was disabled stay ended.
        case accountReenabled = "account_reenabled"
        /// A second factor was withdrawn: a session it (or a thief's first factor) opened ends.
        case secondFactorWithdrawn = "second_factor_withdrawn"
    }

    /// Unix seconds; ID tokens issued earlier are rejected, and all refresh tokens end.
    public var validSince: Int64
    public var reason: Reason

    public init(validSince: Int64, reason: Reason) {
        self.validSince = validSince
        self.reason = reason
    }
}

public struct RefreshTokenIssued: Equatable, Sendable, Encodable {
    /// SHA-256 of the token, lowercase hex. The token itself is never stored.
    public var tokenHash: String
    /// Whether the token names its account, so a refresh finds the account by uid (v2). Tokens
    /// recorded by v1 events do not: they are found through a token-hash index.
    public var namesAccount: Bool

    public init(tokenHash: String, namesAccount: Bool = true) {
        self.tokenHash = tokenHash
        self.namesAccount = namesAccount
    }

    // The event's version says which kind of token it was; the payload is the hash either way.
    private enum CodingKeys: String, CodingKey { case tokenHash }
}

public struct RefreshTokenRevoked: Equatable, Sendable, Encodable {
    public var tokenHash: String
    public init(tokenHash: String) { self.tokenHash = tokenHash }
}

public struct AccountDeleted: Equatable, Sendable, Encodable {
    public enum Actor: String, Sendable, Encodable, CaseIterable {
        case user, admin
    }

    public var by: Actor
    public init(by: Actor) { self.by = by }
}

public struct AccountErased: Equatable, Sendable, Encodable {
    /// Why, as the operator gave it (a ticket reference, "subject request"): kept forever,
    /// so it must not itself be personal data. The actor is in the event's metadata.
    public var reason: String

    public init(reason: String) { self.reason = reason }

    /// A reason as an operator typed it: trimmed, one line of printable text, 1 to
    /// `maxReasonLength` characters; `nil` otherwise.
    public init?(validating reason: String) {
        let trimmed = reason.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
        let text = String(trimmed)
        guard !text.isEmpty, text.count <= Self.maxReasonLength,
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        self.init(reason: text)
    }

    /// The longest reason recorded.
    public static let maxReasonLength = 200
}

public struct SecondFactorWithdrawn: Equatable, Sendable, Encodable {
    public enum Actor: String, Sendable, Encodable, CaseIterable {
        case user, admin
    }

    public var enrollmentId: String
    public var by: Actor

    public init(enrollmentId: String, by: Actor) {
        self.enrollmentId = enrollmentId
        self.by = by
    }
}

public struct SecondFactorUsed: Equatable, Sendable, Encodable {
    public var enrollmentId: String
    /// The TOTP time step whose code was accepted (`SecondFactor.lastUsedStep`).
    public var step: Int64

    public init(enrollmentId: String, step: Int64) {
        self.enrollmentId = enrollmentId
        self.step = step
    }
}

public struct AnonymousPurged: Equatable, Sendable, Encodable {
    /// When the cleanup schedule made the account due.
    public var dueAt: Int64
    /// Which cleanup rule scheduled it, created while cleanup was on or existed when it was
    /// turned on (absent in v1 events).
    public var rule: CleanupSchedule.Rule?
    /// The instant the period counted from: the account's creation or cleanup turned on (v2).
    public var since: Int64?

    public init(dueAt: Int64, rule: CleanupSchedule.Rule? = nil, since: Int64? = nil) {
        self.dueAt = dueAt
        self.rule = rule
        self.since = since
    }

    public init(_ schedule: CleanupSchedule) {
        self.init(dueAt: schedule.dueAt, rule: schedule.rule, since: schedule.since)
    }
}

public struct OOBCodeIssued: Equatable, Sendable, Encodable {
    public enum RequestType: String, Sendable, Encodable, CaseIterable {
        case emailSignIn = "EMAIL_SIGNIN"
        case verifyEmail = "VERIFY_EMAIL"
        case passwordReset = "PASSWORD_RESET"
        case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
        /// Sent to the old address when an email changes: `email` is that address, `newEmail`
        /// the one the account moved to; applying it moves the account back.
        case recoverEmail = "RECOVER_EMAIL"
    }

    public var requestType: RequestType
    public var email: String
    /// The account the code acts on, when there is one (an email sign-in may create it).
    public var uid: UserID?
    public var newEmail: String?
    public var expiresAt: Int64

    public init(requestType: RequestType, email: String, uid: UserID? = nil, newEmail: String? = nil, expiresAt: Int64) {
        self.requestType = requestType
        self.email = email
        self.uid = uid
        self.newEmail = newEmail
        self.expiresAt = expiresAt
    }
}
