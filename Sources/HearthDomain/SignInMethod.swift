/// A provider id as Firebase names it: `password`, `phone`, `google.com`, `github.com`,
/// `oidc.<name>`, ... (`providerId` in `providerUserInfo`, `deleteProvider`, `signInWithIdp`).
public struct ProviderID: RawRepresentable, Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible, Encodable
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let password: ProviderID = "password"
    public static let phone: ProviderID = "phone"
    public static let google: ProviderID = "google.com"
    public static let facebook: ProviderID = "facebook.com"
    public static let github: ProviderID = "github.com"
    public static let yahoo: ProviderID = "yahoo.com"
    public static let apple: ProviderID = "apple.com"

    /// An identity provider's id, as opposed to Firebase's own `password` and `phone`.
    public var isFederated: Bool { self != .password && self != .phone }

    public var description: String { rawValue }
    public static func < (lhs: ProviderID, rhs: ProviderID) -> Bool { lhs.rawValue < rhs.rawValue }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// How a session began, as `account.signed_in` records it: `anonymous`, `password`,
/// `emailLink`, `custom`, `phone` or a federated provider's id.
public struct SignInMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible,
    Encodable
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let anonymous: SignInMethod = "anonymous"
    public static let password: SignInMethod = "password"
    public static let emailLink: SignInMethod = "emailLink"
    public static let custom: SignInMethod = "custom"
    public static let phone: SignInMethod = "phone"

    /// A sign-in through a provider (`.provider(.github)`); `password` and `phone` map to
    /// their own methods.
    public static func provider(_ provider: ProviderID) -> SignInMethod { SignInMethod(rawValue: provider.rawValue) }

    /// The federated provider this session came through, if any.
    public var federatedProvider: ProviderID? {
        switch self {
        case .anonymous, .password, .emailLink, .custom, .phone: nil
        default: ProviderID(rawValue: rawValue)
        }
    }

    /// Firebase's `sign_in_provider` claim for this session: an email-link session counts as
    /// `password`, the provider both belong to.
    public var tokenProvider: String { self == .emailLink ? SignInMethod.password.rawValue : rawValue }

    public var description: String { rawValue }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
