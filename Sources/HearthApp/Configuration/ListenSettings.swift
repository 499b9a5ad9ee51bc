import Foundation
import HearthAuth
import HearthWire

/// Where and how `hearth serve` listens, and who may name the client in front of it.
public struct ListenSettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 9099
    /// Lets the development profile (`Bearer owner`, unsigned custom tokens, the fake IdP,
    /// `/emulator/*`) listen on an address other machines reach. Off: development is loopback only.
    public var insecureDevelopmentOnNetwork = false
    /// Lets the production profile serve plain HTTP on an address other machines reach (a TLS
    /// proxy on another host, over a network that is yours). Off: production listens in
    /// cleartext on loopback only, behind a TLS proxy on the same machine.
    public var insecurePlainHttpOnNetwork = false
    public var publicUrl: String?
    public var trustedProxies: [String] = []
    public var developmentBrowserAdmin = false
    /// The console (`/console`) is not served.
    public var disableConsole = false

    public init() {}

    public struct Valid: Sendable, Equatable {
        public let host: String
        public let port: Int
        /// Without a trailing slash.
        public let publicURL: String?
        public let trustedProxies: [IPNetwork]
        public let developmentBrowserAdmin: Bool
        public let console: Bool
        /// Development's conveniences on an address other machines may reach (allowed by
        /// `insecureDevelopmentOnNetwork`): the start logs a warning.
        public let servesDevelopmentOffLoopback: Bool
        /// Production in cleartext where other machines reach it (allowed by
        /// `insecurePlainHttpOnNetwork`): the start logs a warning.
        public let servesPlainHTTPOffLoopback: Bool
    }

    func validated(_ profile: Profile) throws -> Valid {
        // 0: any free port (tests).
        guard (0...65535).contains(port) else { throw ConfigurationError.invalid("port", source: "\(port)") }
        let offLoopback = !ListenAddress.isLoopback(host)
        if profile == .development && offLoopback && !insecureDevelopmentOnNetwork {
            throw ConfigurationError.developmentOffLoopback(host)
        }
        // Passwords and tokens would cross the network unencrypted unless a TLS proxy is the only thing that reaches it.
        if profile == .production && offLoopback && !insecurePlainHttpOnNetwork {
            throw ConfigurationError.plainHTTPOffLoopback(host)
        }
        let publicURL = publicUrl.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if let publicURL {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil,
                url.query == nil
            else { throw ConfigurationError.invalid("publicUrl", source: publicURL) }
        }
        let proxies = try trustedProxies.map { range in
            guard let network = IPNetwork(range) else {
                throw ConfigurationError.invalid("trustedProxies (addresses or CIDR ranges)", source: range)
            }
            return network
        }
        return Valid(
            host: host, port: port, publicURL: publicURL, trustedProxies: proxies, developmentBrowserAdmin: developmentBrowserAdmin,
            console: !disableConsole, servesDevelopmentOffLoopback: profile == .development && offLoopback,
            servesPlainHTTPOffLoopback: profile == .production && offLoopback)
    }
}
