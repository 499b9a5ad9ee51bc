/// A project's password policy (Identity Platform's `passwordPolicyConfig`): length bounds and
/// the classes of character a password must contain, enforced on the passwords users choose
/// (sign-up, linking, changing, resetting) when `enforced`; administrators may set any password.
public struct PasswordPolicy: Equatable, Hashable, Sendable, Encodable {
    public var enforced = false
    /// Signing in with a password the policy would refuse fails until the user changes it.
    public var forceUpgradeOnSignIn = false
    public var minLength = 6
    public var maxLength = 4096
    public var requireUppercase = false
    public var requireLowercase = false
    public var requireNumeric = false
    public var requireNonAlphanumeric = false

    public init(
        enforced: Bool = false, forceUpgradeOnSignIn: Bool = false, minLength: Int = 6, maxLength: Int = 4096,
        requireUppercase: Bool = false, requireLowercase: Bool = false, requireNumeric: Bool = false,
        requireNonAlphanumeric: Bool = false
    ) {
        self.enforced = enforced
        self.forceUpgradeOnSignIn = forceUpgradeOnSignIn
        self.minLength = minLength
        self.maxLength = maxLength
        self.requireUppercase = requireUppercase
        self.requireLowercase = requireLowercase
        self.requireNumeric = requireNumeric
        self.requireNonAlphanumeric = requireNonAlphanumeric
    }

    /// Identity Platform's bounds: a minimum of 6 to 30, a maximum up to 4096 and no less.
    public static let minLengthRange = 6...30
    public static let longestMaximum = 4096

    public var isValid: Bool {
        Self.minLengthRange.contains(minLength) && (minLength...Self.longestMaximum).contains(maxLength)
    }

    /// The characters that count as non-alphanumeric (Firebase's list, which the SDKs' own
    /// `validatePassword` checks against).
    public static let nonAlphanumericCharacters: [Character] = Array("^$*.[]{}()?\"!@#%&/\\,><':;|_~`=+- ")

    /// A requirement a password fails, in Firebase's words.
    public enum Requirement: Equatable, Sendable {
        case minLength(Int)
        case maxLength(Int)
        case uppercase, lowercase, numeric, nonAlphanumeric

        public var message: String {
            switch self {
            case .minLength(let count): "Password must contain at least \(count) characters"
            case .maxLength(let count): "Password may contain at most \(count) characters"
            case .uppercase: "Password must contain an upper case character"
            case .lowercase: "Password must contain a lower case character"
            case .numeric: "Password must contain a numeric character"
            case .nonAlphanumeric: "Password must contain a non-alphanumeric character"
            }
        }
    }

    /// What `password` lacks (empty: it meets the policy, or the policy is not enforced).
    public func unmet(by password: String) -> [Requirement] {
        guard enforced else { return [] }
        var unmet: [Requirement] = []
        let length = password.count
        if length < minLength { unmet.append(.minLength(minLength)) }
        if length > maxLength { unmet.append(.maxLength(maxLength)) }
        if requireUppercase && !password.contains(where: \.isUppercase) { unmet.append(.uppercase) }
        if requireLowercase && !password.contains(where: \.isLowercase) { unmet.append(.lowercase) }
        if requireNumeric && !password.contains(where: \.isNumber) { unmet.append(.numeric) }
        if requireNonAlphanumeric && !password.contains(where: Self.nonAlphanumericCharacters.contains) {
            unmet.append(.nonAlphanumeric)
        }
        return unmet
    }
}
