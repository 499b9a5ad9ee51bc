import HearthWire

/// What `--host` may be in the development profile.
enum ListenAddress {
    /// Whether `host` is certainly a loopback address: `localhost`, 127.0.0.0/8, `::1` or an
    /// IPv4-mapped 127.x. Any other name could resolve to an address others reach, so it is not.
    static func isLoopback(_ host: String) -> Bool {
        var literal = host.lowercased()
        if literal == "localhost" { return true }
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        return IPAddress(literal)?.isLoopback ?? false
    }
}
