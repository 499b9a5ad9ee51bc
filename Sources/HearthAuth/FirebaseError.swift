import HearthDomain

/// An error as the Firebase SDKs read it: an HTTP status and `error.message`, whose part before
/// " : " is the code the SDKs map (EMAIL_EXISTS, WEAK_PASSWORD : Password should be ...).
public struct FirebaseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var httpStatus: Int
    public var message: String
    /// Google's canonical status name ("INVALID_ARGUMENT"); business errors have none.
    public var status: String?
    /// `errors[0].reason`.
    public var reason: String

    public init(httpStatus: Int = 400, message: String, status: String? = nil, reason: String = "invalid") {
        self.httpStatus = httpStatus
        self.message = message
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(httpStatus) \(message)" }

    /// The code part of the message.
    public var code: String { String(message.split(separator: " : ", maxSplits: 1).first ?? "") }

    public static func bad(_ message: String) -> FirebaseError { FirebaseError(message: message) }

    public static func invalidArgument(_ detail: String, reason: String = "invalid") -> FirebaseError {
        FirebaseError(message: "Invalid JSON payload received. \(detail)", status: "INVALID_ARGUMENT", reason: reason)
    }

    public static let invalidIdToken = bad("INVALID_ID_TOKEN")
    public static let tokenExpired = bad("TOKEN_EXPIRED")
    public static let userNotFound = bad("USER_NOT_FOUND")
    public static let userDisabled = bad("USER_DISABLED")
    public static let missingIdToken = bad("MISSING_ID_TOKEN")
    public static let missingEmail = bad("MISSING_EMAIL")
    public static let missingPassword = bad("MISSING_PASSWORD")
    public static let missingLocalId = bad("MISSING_LOCAL_ID")
    public static let invalidEmail = bad("INVALID_EMAIL")
    public static let emailNotFound = bad("EMAIL_NOT_FOUND")
    public static let invalidPassword = bad("INVALID_PASSWORD")
    /// Email enumeration protection's one answer for an unknown email, an account without a
    /// password and a wrong password.
    public static let invalidLoginCredentials = bad("INVALID_LOGIN_CREDENTIALS")
    public static let weakPassword = bad("WEAK_PASSWORD : Password should be at least 6 characters")
    public static let invalidRefreshToken = bad("INVALID_REFRESH_TOKEN")
    public static let insufficientPermission = bad("INSUFFICIENT_PERMISSION")
    public static let missingOobCode = bad("MISSING_OOB_CODE")
    public static let invalidOobCode = bad("INVALID_OOB_CODE")

    /// A password the project's policy refuses, each requirement it fails named as Identity
    /// Platform names them.
    public static func passwordRequirementsUnmet(_ unmet: [PasswordPolicy.Requirement]) -> FirebaseError {
        bad("PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [\(unmet.map(\.message).joined(separator: ", "))]")
    }

    /// An operator's condition, not a fault: the data directory's disk is full. Reads go on.
    public static let diskFull = FirebaseError(
        httpStatus: 503,
        message: "UNAVAILABLE : The server's disk is full: changes can not be saved until space is freed. Try again later.",
        status: "UNAVAILABLE", reason: "backendError")
    /// In a cluster, a write that reached a node which is not (or no longer) the leader.
    public static let notLeader = FirebaseError(
        httpStatus: 503, message: "UNAVAILABLE : This server is not the cluster's leader at the moment. Try again shortly.",
        status: "UNAVAILABLE", reason: "backendError")
    /// In a cluster, a write the leader committed but its synchronous followers did not confirm
    /// in time: not acknowledged (it may still take effect), and writes are refused until they do.
    public static let notReplicated = FirebaseError(
        httpStatus: 503,
        message: "UNAVAILABLE : The server could not replicate the change in time. Try again shortly.",
        status: "UNAVAILABLE", reason: "backendError")
    /// A node that holds no signing key the ledger calls live (it is fetching a new one).
    public static let signingKeyUnavailable = FirebaseError(
        httpStatus: 503, message: "UNAVAILABLE : This server can not sign tokens at the moment. Try again shortly.",
        status: "UNAVAILABLE", reason: "backendError")
    public static let notFound = FirebaseError(httpStatus: 404, message: "Not Found", status: "NOT_FOUND", reason: "notFound")
    public static let missingAPIKey = FirebaseError(
        httpStatus: 403, message: "The request is missing a valid API key.", status: "PERMISSION_DENIED", reason: "forbidden")
    /// A valid admin credential used on a project it does not cover.
    public static let permissionDenied = FirebaseError(
        httpStatus: 403, message: "The caller does not have permission", status: "PERMISSION_DENIED", reason: "forbidden")
    public static let invalidCredentials = FirebaseError(
        httpStatus: 401,
        message:
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        status: "UNAUTHENTICATED", reason: "authError")

    /// A refused domain rule, in Firebase's words.
    public init(_ error: AuthError) {
        switch error {
        case .needConfirmation:
            self = .bad("EMAIL_EXISTS")
        case .expiredOobCode:
            self = .bad("EXPIRED_OOB_CODE")
        case .revocationTimeOutOfRange:
            self = .invalidArgument("/validSince must be a Unix time in seconds, not in the future")
        case .invalidProjectConfig(let detail):
            self = .bad("INVALID_CONFIG : ((\(detail)))")
        case .invalidErasureReason:
            self = .invalidArgument("/reason must be 1 to \(AccountErased.maxReasonLength) characters of one-line text")
        case .secondFactorsNotEnabled:
            self = .bad("OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.")
        case .unverifiedEmail:
            self = .bad("UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")
        case .secondFactorLimitExceeded:
            self = .bad("SECOND_FACTOR_LIMIT_EXCEEDED : The maximum number of second factors is reached.")
        case .lastSecondFactorRequired:
            self = .bad("OPERATION_NOT_ALLOWED : The project requires a second factor: the last one can not be withdrawn.")
        case .secondFactorReenrolmentRequired:
            self = .bad(
                "MFA_REENROLLMENT_REQUIRED : This account's second factors can not be used here (SMS, or TOTP imported without its secret). An administrator must reset them, then the user enrols a TOTP factor."
            )
        case .unsupportedFirstFactor:
            self = .bad("UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor.")
        case .notAnonymous, .notDue:
            self = .bad("FAILED_PRECONDITION : \(error.firebaseCode)")
        default:
            self = .bad(error.firebaseCode)
        }
    }
}
