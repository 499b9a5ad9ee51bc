/// The stable name and schema version of an event, as stored and as in `schemas/`.
/// Never derived from Swift type names, so renaming code cannot change the ledger.
public struct EventType: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let name: String
    public let version: Int

    public init(_ name: String, version: Int) {
        self.name = name
        self.version = version
    }

    public var description: String { "\(name) v\(version)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.name, lhs.version) < (rhs.name, rhs.version)
    }
}

extension EventType {
    /// v2: password hashes carry a key, a salt separator and an input order (imports); v3: the
    /// personal fields are sealed under the account's key (`PersonalData`).
    public static let accountCreated = EventType("account.created", version: 3)
    public static let signInRecorded = EventType("account.signed_in", version: 1)
    /// v2: the provider's profile is sealed; its provider id is not.
    public static let providerLinked = EventType("account.provider_linked", version: 2)
    /// v2: why (unlinked, or removed when the email was proven).
    public static let providerUnlinked = EventType("account.provider_unlinked", version: 2)
    /// v3: the hash is sealed.
    public static let passwordSet = EventType("account.password_set", version: 3)
    public static let passwordRemoved = EventType("account.password_removed", version: 1)
    /// v2 (these four): the addresses, the profile and the claims are sealed.
    public static let emailVerified = EventType("account.email_verified", version: 2)
    public static let emailChanged = EventType("account.email_changed", version: 2)
    public static let profileUpdated = EventType("account.profile_updated", version: 2)
    public static let customClaimsSet = EventType("account.custom_claims_set", version: 2)
    public static let accountDisabled = EventType("account.disabled", version: 1)
    public static let accountEnabled = EventType("account.enabled", version: 1)
    public static let sessionsRevoked = EventType("account.sessions_revoked", version: 1)
    /// v2: the token names its account (no token-hash index entry).
    public static let refreshTokenIssued = EventType("account.refresh_token_issued", version: 2)
    public static let refreshTokenRevoked = EventType("account.refresh_token_revoked", version: 1)
    public static let accountDeleted = EventType("account.deleted", version: 1)
    /// v2: the rule that scheduled the purge and the instant its period counted from.
    public static let anonymousPurged = EventType("account.anonymous_purged", version: 2)
    public static let accountErased = EventType("account.erased", version: 1)
    /// The factor's display name and secret are sealed.
    public static let secondFactorEnrolled = EventType("account.mfa_enrolled", version: 1)
    public static let secondFactorWithdrawn = EventType("account.mfa_withdrawn", version: 1)
    public static let secondFactorUsed = EventType("account.mfa_code_used", version: 1)
    /// v2: the addresses are sealed.
    public static let oobCodeIssued = EventType("oob_code.issued", version: 2)
    public static let oobCodeConsumed = EventType("oob_code.consumed", version: 1)
    public static let oobCodeExpired = EventType("oob_code.expired", version: 1)
    /// v2: the cleanup period and email enumeration protection; v3: the apps' Team IDs and
    /// signing certificates (`iosApps`, `androidApps`); v4: multi-factor (`multiFactor`) and the
    /// password policy (`passwordPolicy`).
    public static let projectConfigChanged = EventType("project.config_changed", version: 4)

    public static let identityProviderSet = EventType("project.identity_provider_set", version: 1)
    public static let identityProviderDeleted = EventType("project.identity_provider_deleted", version: 1)

    public static let termStarted = EventType("cluster.term_started", version: 1)
    public static let signingKeyPublished = EventType("signing_key.published", version: 1)
    public static let signingKeyActivated = EventType("signing_key.activated", version: 1)
    public static let signingKeyWithdrawn = EventType("signing_key.withdrawn", version: 1)

    /// Earlier versions still in ledgers: read through an upcaster; new events never use them.
    public static let accountCreatedV1 = EventType("account.created", version: 1)
    public static let accountCreatedV2 = EventType("account.created", version: 2)
    public static let passwordSetV1 = EventType("account.password_set", version: 1)
    public static let passwordSetV2 = EventType("account.password_set", version: 2)
    public static let providerLinkedV1 = EventType("account.provider_linked", version: 1)
    public static let emailVerifiedV1 = EventType("account.email_verified", version: 1)
    public static let emailChangedV1 = EventType("account.email_changed", version: 1)
    public static let profileUpdatedV1 = EventType("account.profile_updated", version: 1)
    public static let customClaimsSetV1 = EventType("account.custom_claims_set", version: 1)
    public static let oobCodeIssuedV1 = EventType("oob_code.issued", version: 1)
    public static let refreshTokenIssuedV1 = EventType("account.refresh_token_issued", version: 1)
    public static let anonymousPurgedV1 = EventType("account.anonymous_purged", version: 1)
    public static let projectConfigChangedV1 = EventType("project.config_changed", version: 1)
    public static let projectConfigChangedV2 = EventType("project.config_changed", version: 2)
    public static let projectConfigChangedV3 = EventType("project.config_changed", version: 3)
    public static let providerUnlinkedV1 = EventType("account.provider_unlinked", version: 1)
    public static let historical: [EventType] = [
        .accountCreatedV1, .accountCreatedV2, .passwordSetV1, .passwordSetV2, .refreshTokenIssuedV1, .anonymousPurgedV1,
        .projectConfigChangedV1, .projectConfigChangedV2, .projectConfigChangedV3, .providerUnlinkedV1, .providerLinkedV1, .emailVerifiedV1,
        .emailChangedV1, .profileUpdatedV1, .customClaimsSetV1, .oobCodeIssuedV1,
    ]

    /// Every current event type; `schemas/` has one schema per entry here and in `historical`.
    public static let all: [EventType] = [
        .accountCreated, .signInRecorded, .providerLinked, .providerUnlinked, .passwordSet, .passwordRemoved,
        .emailVerified, .emailChanged, .profileUpdated, .customClaimsSet, .accountDisabled, .accountEnabled,
        .sessionsRevoked, .refreshTokenIssued, .refreshTokenRevoked, .accountDeleted, .anonymousPurged, .accountErased,
        .secondFactorEnrolled, .secondFactorWithdrawn, .secondFactorUsed, .oobCodeIssued, .oobCodeConsumed, .oobCodeExpired,
        .projectConfigChanged, .identityProviderSet, .identityProviderDeleted,
        .termStarted, .signingKeyPublished, .signingKeyActivated, .signingKeyWithdrawn,
    ]
}
