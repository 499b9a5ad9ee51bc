import Foundation
import HTTPTypes
import HearthWire
import Hummingbird

/// An IPv4 or IPv6 address, or a CIDR range of them (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`).
public struct AddressRange: Sendable, Equatable {
    let network: [UInt8]
    let prefixLength: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = Self.bytes(of: first) else { return nil }
        let length = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
        guard let length, (0...bytes.count * 8).contains(length) else { return nil }
        network = bytes
        prefixLength = length
    }

    /// Whether the range holds `address`; an IPv4 address seen through a dual-stack socket
    /// (`::ffff:a.b.c.d`) counts as that IPv4 address.
    public func contains(_ address: String) -> Bool {
        guard let parsed = IPAddress(address) else { return false }
        return contains(parsed)
    }

    public func contains(_ address: IPAddress) -> Bool {
        var bytes = address.bytes
        if bytes.count != network.count { bytes = address.unmapped.bytes }
        guard bytes.count == network.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(network, bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if mine & mask != theirs & mask { return false }
            remaining -= 8
        }
        return true
    }

    /// The address's bytes (4 or 16); `nil` when it is not an address.
    static func bytes(of text: some StringProtocol) -> [UInt8]? { IPAddress(text)?.bytes }
}

extension APIAccess {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The client's address: the TCP peer, unless the peer is one of the trusted proxies; then
    /// the last address in `X-Forwarded-For` that is not itself a trusted proxy (the one the
    /// nearest proxy saw; whatever the client wrote further left is not believed).
    func clientAddress(_ request: Request, peer: String?) -> String? {
        guard let peer, isTrustedProxy(peer) else { return peer }
        let hops = request.headers[values: Self.forwardedFor].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard AddressRange.bytes(of: hop) != nil else { return peer }
            if !isTrustedProxy(hop) { return hop }
        }
        return hops.first ?? peer
    }

    private func isTrustedProxy(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }
}
