/// Why `decide` refused a command. Each maps to the Firebase error code the API returns.
public enum AuthError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    case emailExists
    case phoneNumberExists
    case federatedUserIdAlreadyLinked
    case providerAlreadyLinked
    /// One account per email: a federated sign-in whose email belongs to another account.
    case needConfirmation(email: String, existingUid: UserID)
    case uidExists
    case userNotFound
    case userDisabled
    case operationNotAllowed
    /// Email/Password is off: no password sign-in.
    case passwordLoginDisabled
    case invalidEmail
    case invalidOobCode
    case expiredOobCode
    /// Purge refused: the account was upgraded (or never anonymous).
    case notAnonymous
    /// Purge refused: the account is not scheduled, or not yet due.
    case notDue
    /// A revocation time before 1970 or beyond the allowed clock skew: revocation never moves
    /// back, so a time far ahead would lock the account out for good.
    case revocationTimeOutOfRange
    /// A project setting out of its range.
    case invalidProjectConfig(String)
    /// A provider configuration created twice.
    case configurationExists
    /// A provider configuration that does not exist.
    case configurationNotFound
    /// A sensitive change by a session that signed in too long ago (`RecentSignIn`).
    case credentialTooOld
    /// A session begun before the account's sessions were revoked (`validSince`), or a refresh
    /// token the account no longer holds.
    case tokenExpired
    /// Batch deletion without `force` of an account that is not disabled.
    case notDisabled
    /// An erasure without a reason, or with one too long to record (`AccountErased`).
    case invalidErasureReason
    /// Multi-factor: the project does not allow enrolling TOTP factors.
    case secondFactorsNotEnabled
    /// Multi-factor: a factor needs the account's email verified first.
    case unverifiedEmail
    /// Multi-factor: the account holds `SecondFactorRules.maxFactorsPerAccount` already.
    case secondFactorLimitExceeded
    /// Multi-factor: the enrolment was finalized already.
    case secondFactorExists
    /// Multi-factor: no factor with that enrollment id.
    case secondFactorNotFound
    /// Multi-factor: a wrong code, or one of a time step used already (a replay).
    case invalidSecondFactorCode
    /// Multi-factor: the pending credential expired, or its sign-in completed already.
    case invalidPendingCredential
    /// Multi-factor: the session's first factor can not have a second one.
    case unsupportedFirstFactor
    /// Multi-factor: the project's state is `MANDATORY` and this is the account's last factor.
    case lastSecondFactorRequired
    /// Multi-factor: the account's factors can not be used here (`SecondFactorRules.checkUsable`).
    case secondFactorReenrolmentRequired
    /// Multi-factor: an import names one enrollment id twice.
    case duplicateEnrollmentId

    /// The Firebase error message string (`error.message` in the envelope).
    public var firebaseCode: String {
        switch self {
        case .emailExists: "EMAIL_EXISTS"
        case .phoneNumberExists: "PHONE_NUMBER_EXISTS"
        case .federatedUserIdAlreadyLinked: "FEDERATED_USER_ID_ALREADY_LINKED"
        case .providerAlreadyLinked: "PROVIDER_ALREADY_LINKED"
        case .needConfirmation: "NEED_CONFIRMATION"
        case .uidExists: "DUPLICATE_LOCAL_ID"
        case .userNotFound: "USER_NOT_FOUND"
        case .userDisabled: "USER_DISABLED"
        case .operationNotAllowed: "OPERATION_NOT_ALLOWED"
        case .passwordLoginDisabled: "PASSWORD_LOGIN_DISABLED"
        case .invalidEmail: "INVALID_EMAIL"
        case .invalidOobCode: "INVALID_OOB_CODE"
        case .expiredOobCode: "EXPIRED_OOB_CODE"
        case .notAnonymous: "NOT_ANONYMOUS"
        case .notDue: "NOT_DUE"
        case .revocationTimeOutOfRange: "INVALID_ARGUMENT"
        case .invalidProjectConfig: "INVALID_CONFIG"
        case .configurationExists: "CONFIGURATION_EXISTS"
        case .configurationNotFound: "CONFIGURATION_NOT_FOUND"
        case .credentialTooOld: "CREDENTIAL_TOO_OLD_LOGIN_AGAIN"
        case .tokenExpired: "TOKEN_EXPIRED"
        case .notDisabled: "NOT_DISABLED"
        case .invalidErasureReason: "INVALID_ARGUMENT"
        case .secondFactorsNotEnabled: "OPERATION_NOT_ALLOWED"
        case .unverifiedEmail: "UNVERIFIED_EMAIL"
        case .secondFactorLimitExceeded: "SECOND_FACTOR_LIMIT_EXCEEDED"
        case .secondFactorExists: "SECOND_FACTOR_EXISTS"
        case .secondFactorNotFound: "MFA_ENROLLMENT_NOT_FOUND"
        case .invalidSecondFactorCode: "INVALID_CODE"
        case .invalidPendingCredential: "INVALID_MFA_PENDING_CREDENTIAL"
        case .unsupportedFirstFactor: "UNSUPPORTED_FIRST_FACTOR"
        case .lastSecondFactorRequired: "OPERATION_NOT_ALLOWED"
        case .secondFactorReenrolmentRequired: "MFA_REENROLLMENT_REQUIRED"
        case .duplicateEnrollmentId: "DUPLICATE_MFA_ENROLLMENT_ID"
        }
    }

    public var description: String { firebaseCode }
}
