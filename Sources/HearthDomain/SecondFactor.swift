/// A second factor enrolled on an account (Firebase's `mfaInfo` entry). Hearth verifies TOTP
/// (RFC 6238) codes; its secret is sealed by the auth services before it reaches a command, so
/// the domain, the ledger's plain parts and the projections never hold it in the clear.
public struct SecondFactor: Equatable, Sendable, Encodable {
    public enum Kind: String, Sendable, Encodable, CaseIterable {
        case totp
        /// SMS, imported from Firebase: recorded and shown, never usable here (Hearth sends no
        /// SMS), so it blocks a sign-in on the first factor alone (`SecondFactorRules`).
        case phone
    }

    /// Firebase's `mfaEnrollmentId`.
    public var enrollmentId: String
    public var kind: Kind
    /// The name the user gave it ("Phone app"); personal.
    public var displayName: String?
    /// Unix milliseconds.
    public var enrolledAt: Int64
    /// TOTP: the shared secret, sealed (opaque here); empty when it was imported without one.
    /// Personal.
    public var sealedSecret: [UInt8]
    /// A phone factor's number (E.164); personal.
    public var phoneNumber: String?
    /// The last TOTP time step a code was accepted for: a code of that step or an earlier one is
    /// refused, so a code seen over a shoulder or in a log can not be replayed.
    public var lastUsedStep: Int64

    public init(
        enrollmentId: String, kind: Kind = .totp, displayName: String?, enrolledAt: Int64, sealedSecret: [UInt8],
        phoneNumber: String? = nil, lastUsedStep: Int64
    ) {
        self.enrollmentId = enrollmentId
        self.kind = kind
        self.displayName = displayName
        self.enrolledAt = enrolledAt
        self.sealedSecret = sealedSecret
        self.phoneNumber = phoneNumber
        self.lastUsedStep = lastUsedStep
    }

    /// Whether a code can prove it here: a TOTP factor with its secret.
    public var isUsable: Bool { kind == .totp && !sealedSecret.isEmpty }

    // Audit output names the factor, never its secret.
    private enum CodingKeys: String, CodingKey {
        case enrollmentId, kind, displayName, enrolledAt, phoneNumber, lastUsedStep
    }
}

/// Firebase's multi-factor rules, as Identity Platform applies them to TOTP.
public enum SecondFactorRules {
    /// Identity Platform's limit of enrolled factors per account.
    public static let maxFactorsPerAccount = 5
    /// How long a pending credential (a first factor passed, the second awaited) stays good (ms).
    public static let pendingCredentialLifetime: Int64 = 5 * 60 * 1000
    /// How long a TOTP enrolment may take between `start` and `finalize` (ms).
    public static let enrolmentLifetime: Int64 = 10 * 60 * 1000
    /// The longest display name a factor keeps (bytes of UTF-8).
    public static let maxDisplayNameBytes = 256

    /// First factors no second factor can follow (Firebase's UNSUPPORTED_FIRST_FACTOR): an
    /// anonymous session has nothing to protect, a custom token is the app's own word.
    public static func supportsFirstFactor(_ method: SignInMethod) -> Bool {
        method != .anonymous && method != .custom && method != .phone
    }

    /// A sign-in that needs a second factor, of an account with none usable here (only SMS
    /// factors, or TOTP ones imported without their secret), is refused rather than let through
    /// on its first factor: an administrator resets the factors and the user enrols anew.
    public static func checkUsable(_ account: Account) throws(AuthError) {
        guard account.secondFactors.contains(where: \.isUsable) else { throw .secondFactorReenrolmentRequired }
    }

    /// An import's factors (`mfaInfo`): at most `maxFactorsPerAccount`, each id once.
    public static func checkImported(_ factors: [SecondFactor]) throws(AuthError) {
        guard factors.count <= maxFactorsPerAccount else { throw .secondFactorLimitExceeded }
        guard Set(factors.map(\.enrollmentId)).count == factors.count else { throw .duplicateEnrollmentId }
    }

    /// Whether a sign-in completes only once a second factor is verified: the account has one.
    /// Enrolled factors hold whatever the project's setting: turning MFA off must not
    /// silently unprotect the accounts that chose it.
    public static func requiresSecondFactor(_ account: Account) -> Bool {
        !account.secondFactors.isEmpty
    }

    /// A pending credential issued at `since` completes one sign-in, within its lifetime: any
    /// sign-in recorded after it was issued (its own, or another) spends it. (One recorded in
    /// the very millisecond it was issued does not: no one types a code that fast, and the
    /// code's time step is spent by then anyway.)
    public static func checkPending(since: Int64, account: Account, now: Int64) throws(AuthError) {
        guard now - since <= pendingCredentialLifetime, since >= account.lastSignInAt ?? Int64.min else {
            throw .invalidPendingCredential
        }
    }

    /// `MANDATORY`: a user may not withdraw their last factor (an administrator may, to let them
    /// enrol a new one). Accounts without a factor still sign in, so that they can enrol one;
    /// apps that must refuse them read the ID token's `firebase.sign_in_second_factor`.
    public static func checkWithdrawal(
        from account: Account, by actor: SecondFactorWithdrawn.Actor, config: ProjectConfig
    ) throws(AuthError) {
        guard actor == .user, config.multiFactor.state == .mandatory, account.secondFactors.count <= 1 else { return }
        throw .lastSecondFactorRequired
    }

    /// The checks before a factor is enrolled (start and finalize alike).
    public static func checkEnrolment(of account: Account, config: ProjectConfig) throws(AuthError) {
        guard config.multiFactor.allowsTOTP else { throw .secondFactorsNotEnabled }
        guard account.email != nil, account.emailVerified else { throw .unverifiedEmail }
        guard account.secondFactors.count < maxFactorsPerAccount else { throw .secondFactorLimitExceeded }
    }
}

/// The project's multi-factor setting (the v2 config's `mfa`).
public struct MultiFactorConfig: Equatable, Sendable, Encodable {
    public enum State: String, Sendable, Encodable, CaseIterable {
        case disabled = "DISABLED"
        case enabled = "ENABLED"
        case mandatory = "MANDATORY"
    }

    public var state: State = .disabled
    /// TOTP as a provider (`providerConfigs[].totpProviderConfig`): on or off.
    public var totpEnabled = false
    /// Time steps either side of the current one whose codes are accepted (clock skew), 0-10.
    public var adjacentIntervals = 5

    public static let adjacentIntervalsRange = 0...10

    public init(state: State = .disabled, totpEnabled: Bool = false, adjacentIntervals: Int = 5) {
        self.state = state
        self.totpEnabled = totpEnabled
        self.adjacentIntervals = adjacentIntervals
    }

    /// Whether users may enrol TOTP factors.
    public var allowsTOTP: Bool { state != .disabled && totpEnabled }
}
