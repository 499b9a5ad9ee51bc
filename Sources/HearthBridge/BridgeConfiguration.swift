import Foundation
import HearthWire
import Logging
import NIOCore

/// Where the bridge forwards to, and how it trusts and limits that connection.
public struct BridgeConfiguration: Sendable {
    /// Hearth over TLS: `https://auth.example.com` (a path prefix is kept: `https://example.com/auth`).
    public var upstream: Upstream
    /// The CAs the upstream's certificate must chain to: the system's trust store, or only the
    /// certificates of a PEM file (a private CA).
    public var trust: Trust = .system
    /// SHA-256 digests (base64) of the SubjectPublicKeyInfo the upstream's certificate must
    /// carry, on top of the chain's verification: one of them must match. Empty: no pinning.
    public var pins: [SPKIPin] = []
    /// Servers only (`hearth bridge --admin-token-file`): the Admin SDKs' emulator credential
    /// exchanged for a real admin token, for the users it allows.
    public var emulatorAdmin: EmulatorAdmin?
    /// The loopback address and port to listen on; port 0 lets the system pick one.
    public var listenHost = "127.0.0.1"
    public var listenPort = 0
    /// Connections from the app (or the Admin SDK) served at once; further ones are closed as
    /// they open.
    public var maxClientConnections = 64
    /// Connections to the upstream open at once, idle ones kept for reuse included; a request
    /// that finds none free waits up to `queueTimeout` for one, then gets a 503.
    public var maxUpstreamConnections = 8
    public var connectTimeout: TimeAmount = .seconds(10)
    public var queueTimeout: TimeAmount = .seconds(10)
    /// How long the upstream may stay silent while a request is in flight (a 504 after it).
    public var responseTimeout: TimeAmount = .seconds(60)
    /// How long a client connection may sit between requests, and an upstream one in the pool.
    public var clientIdleTimeout: TimeAmount = .seconds(60)
    public var upstreamIdleTimeout: TimeAmount = .seconds(20)
    /// Suspend and resume with the app: UIKit's background and foreground notifications by
    /// default on iOS; nil to call `suspend()` and `resume()` yourself.
    public var lifecycle: BridgeLifecycle? = .platformDefault
    /// Event loop threads (Linux); on Apple's platforms the bridge runs on one.
    public var threads = 1
    public var logger = Logger(label: "hearth.bridge")

    public enum Trust: Sendable, Equatable {
        case system
        /// The certificates in a PEM file, and only those, as trust anchors.
        case certificates(pemFile: String)
    }

    public init(upstream: Upstream) {
        self.upstream = upstream
    }

    /// Checks what a caller can get wrong before anything listens.
    func validate() throws {
        // An address, not a name: "localhost" could resolve to anything.
        let address = listenHost.hasPrefix("[") && listenHost.hasSuffix("]") ? String(listenHost.dropFirst().dropLast()) : listenHost
        guard IPAddress(address)?.isLoopback == true else { throw BridgeError.listenNotLoopback(listenHost) }
        guard (0...65_535).contains(listenPort) else { throw BridgeError.invalidSetting("listen port \(listenPort)") }
        guard maxClientConnections >= 1, maxUpstreamConnections >= 1, threads >= 1 else {
            throw BridgeError.invalidSetting("connection limits and threads must be at least 1")
        }
        if case .certificates(let file) = trust {
            let anchors = try PEM.certificates(in: try PEM.read(file))
            guard !anchors.isEmpty else { throw BridgeError.invalidSetting("\(file) holds no PEM certificate") }
        }
    }
}

/// The upstream as a URL's parts: always https, never anything but this one host and port.
public struct Upstream: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    /// Prepended to every request's path (no trailing slash; empty for none).
    public let pathPrefix: String

    public init(url: URL) throws {
        guard url.scheme?.lowercased() == "https" else {
            throw BridgeError.invalidUpstream(
                "\(url.absoluteString): the upstream must be https (the bridge exists to keep Hearth's traffic off cleartext)")
        }
        guard let host = url.host, !host.isEmpty, url.user == nil, url.password == nil, url.query == nil, url.fragment == nil else {
            throw BridgeError.invalidUpstream("\(url.absoluteString): a host, an optional port and path, nothing else")
        }
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = url.port ?? 443
        guard (1...65_535).contains(port) else { throw BridgeError.invalidUpstream("port \(port)") }
        // As it goes on the request line: percent-encoded.
        var path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        guard !ForwardingRules.hasDotSegment(path) else { throw BridgeError.invalidUpstream("\(url.absoluteString): no dot segments") }
        self.pathPrefix = path
    }

    public init(_ string: String) throws {
        guard let url = URL(string: string) else { throw BridgeError.invalidUpstream(string) }
        try self.init(url: url)
    }

    /// The `Host` header requests carry upstream.
    var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? name : "\(name):\(port)"
    }

    /// Whether the host is an address literal (no SNI then: TLS names only DNS hosts).
    var hostIsAddress: Bool { IPAddress(host) != nil }

    public var description: String { "https://\(authority)\(pathPrefix)" }
}

public enum BridgeError: Error, Equatable, CustomStringConvertible {
    case listenNotLoopback(String)
    case invalidUpstream(String)
    case invalidPin(String)
    case invalidSetting(String)
    case unreadable(String)

    public var description: String {
        switch self {
        case .listenNotLoopback(let host):
            "the bridge listens on loopback only (127.0.0.1 or ::1), not \(host): on any other address it would carry other machines' traffic"
        case .invalidUpstream(let reason): "invalid upstream: \(reason)"
        case .invalidPin(let pin):
            "invalid pin \(pin): a base64 SHA-256 digest of a SubjectPublicKeyInfo (44 characters), optionally prefixed sha256/"
        case .invalidSetting(let reason): "invalid setting: \(reason)"
        case .unreadable(let path): "can not read \(path)"
        }
    }
}
