/// How much of a client's address the log keeps. An IP address is personal data: by default
/// the log keeps its network (IPv4 /24, IPv6 /48), which still tells a flood's origin apart,
/// and the full address only where the operator chose it (a blocker that reads the log).
public enum ClientAddressLogging: String, Sendable, CaseIterable {
    case full, network, none

    /// What the log shows of `address` ("-" for none, or text that is not an address).
    public func render(_ address: String?) -> String {
        guard self != .none, let address, let parsed = IPAddress(address) else { return "-" }
        if self == .full { return address }
        let ip = parsed.unmapped
        let bytes = ip.bytes
        if ip.isIPv4 { return "\(bytes[0]).\(bytes[1]).\(bytes[2]).0/24" }
        let groups = stride(from: 0, to: 6, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/48"
    }
}
