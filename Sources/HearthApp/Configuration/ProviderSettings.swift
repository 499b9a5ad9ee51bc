import Foundation
import HearthAuth
import HearthOAuth
import HearthWire

/// How Hearth reaches identity providers: their endpoints, the deadline, the networks and hosts
/// beyond the public internet they may be on, and where their secret files may be.
public struct ProviderSettings: Sendable, Equatable {
    /// The `identityProviders` overrides: `{"github.com": {"webUrl", "apiUrl"}, "yahoo.com": {"issuer"}}`.
    public var endpoints: [String: JSONValue] = [:]
    public var timeoutSeconds = 10
    public var allowedNetworks: [String] = []
    public var allowedHosts: [String] = []
    /// Where admins may point a provider's `clientSecretFile` through the API; systemd's
    /// credentials directory when it sets one.
    public var secretFilesDirectory: String? = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]

    public init() {}

    public struct Valid: Sendable {
        public let endpoints: ProviderEndpoints
        public let network: ProviderNetworkPolicy
        public let timeoutSeconds: Int
        public let secretFilesDirectory: String?
    }

    func validated(_ profile: Profile) throws -> Valid {
        let endpoints: ProviderEndpoints
        do {
            endpoints = try ProviderEndpoints(overrides: self.endpoints)
        } catch {
            throw ConfigurationError.invalid("identityProviders", source: "\(error)")
        }
        try LimitsSettings.check("providerTimeoutSeconds", timeoutSeconds, 1...120)
        return Valid(
            endpoints: endpoints, network: try networkPolicy(profile), timeoutSeconds: timeoutSeconds,
            secretFilesDirectory: secretFilesDirectory)
    }
}
