import Dispatch
import HearthAuth
import HearthWire
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where Hearth may connect on behalf of an identity provider's configuration (an admin sets an
/// `oidc.*` issuer; the issuer's discovery document names the rest): only to public addresses,
/// checked after DNS resolution, unless the operator allowlisted the network
/// (`providerAllowedNetworks`), and plain `http` only to an allowlisted network. The
/// development profile allowlists loopback, where a developer's test issuer runs.
public struct ProviderNetworkPolicy: Sendable, Equatable {
    /// Addresses beyond the public internet that providers may be reached at.
    public var allowedNetworks: [IPNetwork]
    /// Hosts an `oidc.*` issuer's discovery document may name besides the issuer's own
    /// (`providerAllowedHosts`: `login.example.com`, or `*.example.com` for its subdomains).
    public var allowedHosts: [String]

    public init(allowedNetworks: [IPNetwork] = [], allowedHosts: [String] = []) {
        self.allowedNetworks = allowedNetworks
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
    }

    public static let loopback = [IPNetwork("127.0.0.0/8")!, IPNetwork("::1/128")!]

    package struct Refused: Error, CustomStringConvertible {
        package var description: String
    }

    package func allowsHost(_ host: String) -> Bool {
        allowedHosts.contains { allowed in
            allowed == host || (allowed.hasPrefix("*.") && host.hasSuffix(allowed.dropFirst()))
        }
    }

    /// The address to connect to for `url`: every address its host resolves to must be allowed
    /// (a name that answers with one public and one private address is refused, whichever
    /// would be tried), and the connection then goes to the one checked, not to a second
    /// resolution (DNS rebinding).
    package func address(for url: ProviderURL) async throws -> IPAddress {
        let addresses: [IPAddress]
        if let literal = IPAddress(url.host) {
            addresses = [literal]
        } else {
            addresses = try await Self.resolve(url.host)
        }
        // IPv4 first: one address is connected to, and IPv4 reaches a dual-stack provider from
        // hosts without IPv6 routes too.
        guard let first = addresses.first(where: \.isIPv4) ?? addresses.first else {
            throw Refused(description: "\(url.host) does not resolve")
        }
        for address in addresses {
            let allowlisted = allowedNetworks.contains { $0.contains(address) }
            guard allowlisted || address.isPublic else {
                throw Refused(description: "\(url.host) resolves to \(address), which is not a public address (providerAllowedNetworks)")
            }
            guard allowlisted || url.scheme == "https" else {
                throw Refused(description: "\(url.text) is plain http to \(address), outside providerAllowedNetworks")
            }
        }
        return first
    }

    /// `getaddrinfo` on a thread of its own (it blocks), TCP addresses only. A cancelled caller
    /// (the call's deadline passed) stops waiting at once; the lookup finishes on its own.
    static func resolve(_ host: String) async throws -> [IPAddress] {
        let lookup = Lookup()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard lookup.begin(continuation) else { return }
                DispatchQueue.global().async { lookup.finish(Result { try Self.addresses(of: host) }) }
            }
        } onCancel: {
            lookup.finish(.failure(CancellationError()))
        }
    }

    /// One resumption of a lookup's continuation, by its result or by cancellation, whichever
    /// comes first (cancellation may even come before the lookup begins).
    private final class Lookup: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<[IPAddress], any Error>?, finished: Bool)>((nil, false))

        /// `false` (and the continuation resumed) when the lookup was cancelled already.
        func begin(_ continuation: CheckedContinuation<[IPAddress], any Error>) -> Bool {
            let cancelled = state.withLock { state in
                if state.finished { return true }
                state.continuation = continuation
                return false
            }
            if cancelled { continuation.resume(throwing: CancellationError()) }
            return !cancelled
        }

        func finish(_ result: Result<[IPAddress], any Error>) {
            let continuation = state.withLock { state in
                defer { state = (nil, true) }
                return state.continuation
            }
            continuation?.resume(with: result)
        }
    }

    private static func addresses(of host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else { throw Refused(description: "\(host) does not resolve (getaddrinfo \(status))") }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor?.pointee {
            if let address = entry.ai_addr, let parsed = Self.address(address, family: entry.ai_family), !addresses.contains(parsed) {
                addresses.append(parsed)
            }
            cursor = entry.ai_next
        }
        return addresses
    }

    private static func address(_ socketAddress: UnsafeMutablePointer<sockaddr>, family: Int32) -> IPAddress? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch family {
        case AF_INET:
            var v4 = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &v4, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var v6 = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            guard inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        return text.withUnsafeBufferPointer { IPAddress(String(cString: $0.baseAddress!)) }
    }
}
