import HearthApp
import HearthCluster
import Testing

/// The `cluster` object: absent, a single node; present, every field checked, the TTL bounded.
@Suite("configuration: the cluster section")
struct ClusterSettingsTests {
    static func load(_ json: String) throws -> ServerConfiguration {
        try ServerConfiguration.load(file: nil, environment: ["HEARTH_CLUSTER": json])
    }

    @Test("without it, one node; with it, the node's place, URLs without a trailing slash, a 5 s lease by default")
    func accepted() throws {
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).cluster == nil)
        let cluster = try #require(
            try Self.load(
                #"{"name": "auth", "node": "n-1.a", "etcd": ["http://10.0.0.5:2379/", "https://etcd.example:2379"], "advertiseUrl": "http://10.0.0.2:9099/"}"#
            ).cluster)
        #expect(
            cluster
                == ClusterConfiguration(
                    name: "auth", node: "n-1.a", etcd: ["http://10.0.0.5:2379", "https://etcd.example:2379"],
                    advertiseURL: "http://10.0.0.2:9099",
                    leaseSeconds: 5))
        #expect(cluster.leaderKey == "/hearth/auth/leader")
        #expect(cluster.memberKey == "/hearth/auth/members/n-1.a")
    }

    @Test("refused, naming the setting: a missing or odd name, no etcd, a URL with a path, an unknown key, a lease out of range")
    func refusals() {
        let valid = #""etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099""#
        for json in [
            #"{"node": "n1", \#(valid)}"#, #"{"name": "a/b", "node": "n1", \#(valid)}"#, #"{"name": "", "node": "n1", \#(valid)}"#,
            #"{"name": "c", "node": "n1", "etcd": [], "advertiseUrl": "http://a:9099"}"#,
            #"{"name": "c", "node": "n1", "etcd": ["etcd:2379"], "advertiseUrl": "http://a:9099"}"#,
            #"{"name": "c", "node": "n1", "etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099/path"}"#,
            #"{"name": "c", "node": "n1", \#(valid), "leader": true}"#, #"{"name": "c", "node": "n1", \#(valid), "leaseSeconds": 1}"#,
            #"{"name": "c", "node": "n1", \#(valid), "leaseSeconds": "5"}"#, #""not an object""#,
        ] {
            #expect(throws: ConfigurationError.self, "\(json)") { try Self.load(json) }
            #expect("\(json)") { try Self.load(json) } throws: { error in
                guard case ConfigurationError.invalid(let key, _) = error else { return false }
                return key == "cluster"
            }
        }
    }
}
