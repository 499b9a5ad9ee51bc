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
        }
    }

    public var description: String { firebaseCode }
}
