import Crypto
import Foundation
import HTTPTypes
import HearthWire
import Hummingbird

/// The trusted proxies' ranges: HearthWire's `IPNetwork`, the one CIDR type behind them and the
/// identity providers' allowed networks.
public typealias AddressRange = IPNetwork

extension IPNetwork {
    /// Whether the range holds the address `text` (`false` when it is not an address).
    public func contains(_ text: String) -> Bool {
        IPAddress(text).map(contains) ?? false
    }
}

extension APIAccess {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The client's address: the TCP peer, unless the peer is one of the trusted proxies; then
    /// the last address in `X-Forwarded-For` that is not itself a trusted proxy (the one the
    /// nearest proxy saw; whatever the client wrote further left is not believed). A request a
    /// follower forwarded with the cluster's credential names its client (`LeaderForwarding`).
    func clientAddress(_ request: Request, peer: String?) -> String? {
        if let forwarded = forwardedClient(request) { return forwarded }
        guard let peer, isTrustedProxy(peer) else { return peer }
        let hops = request.headers[values: Self.forwardedFor].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard IPAddress(hop) != nil else { return peer }
            if !isTrustedProxy(hop) { return hop }
        }
        return hops.first ?? peer
    }

    /// The client a follower names, when it presents the cluster's credential.
    private func forwardedClient(_ request: Request) -> String? {
        guard let forwardingTokenDigest, let token = request.headers[LeaderForwarding.forwardingToken],
            SHA256.hash(data: Array(token.utf8)) == forwardingTokenDigest,
            let client = request.headers[LeaderForwarding.forwardedFor], IPAddress(client) != nil
        else { return nil }
        return client
    }

    private func isTrustedProxy(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }
}
