import Foundation

/// A URL of an identity provider that Hearth fetches or sends a browser to, taken apart and
/// checked for shape: `http` or `https` (never `http+unix`, `file` or another scheme a client
/// library might honour), a host, no user info, nothing that is not printable ASCII.
public struct ProviderURL: Sendable, Equatable {
    public let text: String
    public let scheme: String
    /// Lowercased; an IPv6 literal without its brackets.
    public let host: String
    public let port: Int?

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ text: String) throws(Invalid) {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\\") }),
            let components = URLComponents(string: text), let scheme = components.scheme?.lowercased()
        else { throw Invalid(description: "\(Self.quoted(text)) is not an absolute URL") }
        guard scheme == "https" || scheme == "http" else { throw Invalid(description: "\(Self.quoted(text)) is not http or https") }
        guard components.user == nil, components.password == nil else {
            throw Invalid(description: "\(Self.quoted(text)) carries user info")
        }
        var host = components.percentEncodedHost ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("%") else { throw Invalid(description: "\(Self.quoted(text)) names no host") }
        self.text = text
        self.scheme = scheme
        self.host = host.lowercased()
        port = components.port
    }

    /// An issuer: as any provider URL, and no query or fragment either, since the discovery
    /// document is fetched at `<issuer>/.well-known/openid-configuration` (a `?` or `#` in the
    /// issuer would move that fetch to any path of the host).
    public static func issuer(_ text: String) throws(Invalid) -> ProviderURL {
        let url = try ProviderURL(text)
        guard !text.contains("?"), !text.contains("#") else {
            throw Invalid(description: "the issuer \(quoted(text)) has a query or fragment")
        }
        return url
    }

    /// The same origin as `other`: scheme, host and port.
    public func sameOrigin(_ other: ProviderURL) -> Bool {
        scheme == other.scheme && host == other.host && (port ?? defaultPort) == (other.port ?? other.defaultPort)
    }

    public var defaultPort: Int { scheme == "https" ? 443 : 80 }

    /// At most 200 characters of `text` for a log line.
    static func quoted(_ text: String) -> String {
        "\"" + (text.count > 200 ? String(text.prefix(200)) + "…" : text) + "\""
    }
}
