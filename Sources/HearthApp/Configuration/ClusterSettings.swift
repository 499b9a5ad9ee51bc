import Foundation
import HearthCluster
import HearthWire

/// The `cluster` object: this node's place in a cluster (issue 32). Without it Hearth runs as
/// one node, exactly as before.
public struct ClusterSettings: Sendable, Equatable {
    /// The object as the file (or `HEARTH_CLUSTER`) gave it, checked by `validated`.
    public var object: [String: JSONValue]?

    public init() {}

    static let keys: Set<String> = [
        "name", "node", "etcd", "advertiseUrl", "leaseSeconds", "replicationTokenFile", "synchronousFollowers",
        "synchronousTimeoutSeconds",
    ]
    static let minimumTokenLength = 32

    func validated() throws -> ClusterConfiguration? {
        guard let object else { return nil }
        func invalid(_ detail: String) -> ConfigurationError { .invalid("cluster", source: detail) }
        if let unknown = object.keys.sorted().first(where: { !Self.keys.contains($0) }) { throw invalid("unknown key '\(unknown)'") }
        func name(_ key: String) throws -> String {
            guard let value = object[key]?.stringValue, Self.isName(value) else {
                throw invalid("\(key): 1 to 63 letters, digits, '.', '_' or '-'")
            }
            return value
        }
        guard let etcd = object["etcd"]?.arrayValue?.compactMap(\.stringValue), !etcd.isEmpty, etcd.allSatisfy(Self.isHTTPURL) else {
            throw invalid("etcd: a list of etcd client URLs (http://host:2379)")
        }
        guard let advertise = object["advertiseUrl"]?.stringValue, Self.isHTTPURL(advertise) else {
            throw invalid("advertiseUrl: this node's URL as the other nodes reach it (http://10.0.0.2:9099)")
        }
        func integer(_ key: String, in range: ClosedRange<Int64>, default fallback: Int64) throws -> Int64 {
            guard let value = object[key] else { return fallback }
            guard case .int(let number) = value, range.contains(number) else {
                throw invalid("\(key): \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let leaseSeconds = try integer("leaseSeconds", in: 2...60, default: 5)
        let synchronousFollowers = try integer("synchronousFollowers", in: 0...8, default: 1)
        let synchronousTimeout = try integer("synchronousTimeoutSeconds", in: 1...300, default: 10)
        guard let tokenFile = object["replicationTokenFile"]?.stringValue, !tokenFile.isEmpty else {
            throw invalid("replicationTokenFile: a file holding the credential every node of the cluster shares")
        }
        guard let token = try SecretSettings.credentialLines(tokenFile).first, token.count >= Self.minimumTokenLength else {
            throw invalid(
                "replicationTokenFile: its first line must be at least \(Self.minimumTokenLength) characters (openssl rand -base64 32)")
        }
        return ClusterConfiguration(
            name: try name("name"), node: try name("node"), etcd: etcd.map { Self.trimmed($0) }, advertiseURL: Self.trimmed(advertise),
            leaseSeconds: leaseSeconds, replicationToken: token, synchronousFollowers: Int(synchronousFollowers),
            synchronousTimeout: .seconds(synchronousTimeout))
    }

    static func isName(_ value: String) -> Bool {
        (1...63).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E
                    || byte == 0x5F || byte == 0x2D
            }
    }

    static func isHTTPURL(_ value: String) -> Bool {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return false }
        return (scheme == "http" || scheme == "https") && url.query == nil && url.fragment == nil
            && (url.path.isEmpty || url.path == "/")
    }

    static func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
}
