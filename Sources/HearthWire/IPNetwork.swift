/// A CIDR range of addresses (`10.0.0.0/8`, `fd00::/8`; a bare address is its own /32 or /128).
/// An IPv4 range also matches the IPv4-mapped form of its addresses (`::ffff:10.0.0.1`).
public struct IPNetwork: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let address = IPAddress(first) else { return nil }
        let length = parts.count == 2 ? Int(parts[1]) : address.bytes.count * 8
        guard let length, (0...address.bytes.count * 8).contains(length) else { return nil }
        network = address
        prefixLength = length
    }

    public func contains(_ address: IPAddress) -> Bool {
        let candidate = network.isIPv4 ? address.unmapped : address
        guard candidate.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(network.bytes, candidate.bytes) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if mine & mask != theirs & mask { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(network)/\(prefixLength)" }
}
