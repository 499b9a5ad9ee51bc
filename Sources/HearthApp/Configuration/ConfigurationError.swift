import HearthAuth

/// Why `hearth serve` will not start on these settings; the message names the setting, never a secret.
public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    case unreadable(String)
    case notJSONObject(String)
    case unknownKey(String, in: String)
    case invalid(String, source: String)
    case productionNeedsAPIKeys
    case weakAdminToken(String)
    case developmentOffLoopback(String)
    case plainHTTPOffLoopback(String)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read \(path)"
        case .notJSONObject(let path): "\(path) is not a JSON object"
        case .unknownKey(let key, let path): "unknown setting '\(key)' in \(path)"
        case .invalid(let key, let source): "invalid \(key) (\(source))"
        case .productionNeedsAPIKeys: "the production profile needs apiKeys (API key -> project id)"
        case .weakAdminToken(let weakness):
            // The token itself is not repeated: this line goes to logs.
            "an admin token is \(weakness); use at least \(AdminCredential.minimumLength) random characters (openssl rand -base64 32)"
        case .developmentOffLoopback(let host):
            "the development profile serves Bearer owner, unsigned custom tokens and the fake IdP to anyone who can reach it, "
                + "so it listens on loopback only (\(host) is not): use 127.0.0.1 or ::1, the production profile, "
                + "or --insecure-development-on-network if this network is yours alone"
        case .plainHTTPOffLoopback(let host):
            "production serves sign-ins in plain HTTP, so it listens on loopback only (\(host) is not), behind a TLS "
                + "proxy on this machine (docs/security.md, \"Hearth behind TLS\"); if the proxy is on another host and the network between "
                + "is yours alone, say so with insecurePlainHttpOnNetwork: true"
        }
    }
}
