#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address in binary form, from its text by `inet_pton` (so no name, port or
/// zone passes for one). The one parser behind trusted proxies, abuse-limit keys and the
/// development profile's loopback check.
public struct IPAddress: Sendable, Equatable, Hashable {
    /// 4 bytes for IPv4, 16 for IPv6, network order.
    public let bytes: [UInt8]

    public init?(_ text: some StringProtocol) {
        let text = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    public var isIPv4: Bool { bytes.count == 4 }

    /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, how a dual-stack socket shows an IPv4
    /// peer) as that IPv4 address; any other address as itself.
    public var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return self }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// 127.0.0.0/8 or `::1` (mapped IPv4 included).
    public var isLoopback: Bool {
        let address = unmapped
        if address.isIPv4 { return address.bytes[0] == 127 }
        return address.bytes[0..<15].allSatisfy { $0 == 0 } && address.bytes[15] == 1
    }

    /// An IPv4 address in dotted decimal; an IPv6 address's first 64 bits as `a:b:c:d::/64`
    /// (what one subscriber is usually given).
    public var subscriberKey: String {
        if isIPv4 { return bytes.map { String($0) }.joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
