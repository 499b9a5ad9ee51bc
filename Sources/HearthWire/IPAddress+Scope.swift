/// Whether an address is on the public internet, for outbound calls an untrusted party can aim
/// (an identity provider's URLs): loopback, private, link-local (the cloud metadata service at
/// 169.254.169.254), shared (CGNAT), unique-local, multicast, unspecified and the other
/// special-purpose ranges of IANA's registries are not (the IPv4-compatible `::/96` and
/// IPv4-translated `::ffff:0:0:0/96` forms included, which a tunnel could route to IPv4).
extension IPAddress {
    static let nonPublic: [IPNetwork] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
        "224.0.0.0/4", "240.0.0.0/4",
        "::/96", "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
        "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    ].map { IPNetwork($0)! }

    /// Not in any special-purpose range. An IPv4-mapped IPv6 address is judged as its IPv4
    /// address; NAT64 and 6to4 forms, which reach an IPv4 address through a gateway, never pass.
    public var isPublic: Bool {
        let address = unmapped
        return !Self.nonPublic.contains { $0.contains(address) }
    }
}

extension IPAddress: CustomStringConvertible {
    /// Dotted decimal, or IPv6 as eight hexadecimal groups with the longest run of zeros as `::`.
    public var description: String {
        if isIPv4 { return bytes.map { String($0) }.joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length && end - index > 1 { best = (index, end - index) }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        return hex[..<best.start].joined(separator: ":") + "::" + hex[(best.start + best.length)...].joined(separator: ":")
    }
}
