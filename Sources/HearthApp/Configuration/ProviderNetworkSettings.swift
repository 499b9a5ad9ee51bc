import HearthAuth
import HearthOAuth
import HearthWire

/// `providerAllowedNetworks` and `providerAllowedHosts`: what identity providers' URLs may reach
/// beyond public https hosts. Development allowlists loopback besides.
extension ProviderSettings {
    func networkPolicy(_ profile: Profile) throws -> ProviderNetworkPolicy {
        var networks: [IPNetwork] = []
        for text in allowedNetworks {
            guard let network = IPNetwork(text) else {
                throw ConfigurationError.invalid("providerAllowedNetworks (addresses or CIDR ranges)", source: text)
            }
            networks.append(network)
        }
        if profile == .development { networks += ProviderNetworkPolicy.loopback }
        for host in allowedHosts {
            let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
            let label = Set("abcdefghijklmnopqrstuvwxyz0123456789-.".utf8)
            guard !name.isEmpty, name.lowercased().utf8.allSatisfy(label.contains), !name.hasPrefix("."), !name.hasSuffix(".") else {
                throw ConfigurationError.invalid("providerAllowedHosts (host names, or *.domain)", source: host)
            }
        }
        return ProviderNetworkPolicy(allowedNetworks: networks, allowedHosts: allowedHosts)
    }
}
