import Foundation
import HearthApp
import HearthCluster
import HearthTesting
import Testing

/// The `cluster` object: absent, a single node; present, every field checked, the TTL bounded,
/// the replication credential read from its file.
@Suite("configuration: the cluster section")
struct ClusterSettingsTests {
    static func load(_ json: String) throws -> ServerConfiguration {
        try ServerConfiguration.load(file: nil, environment: ["HEARTH_CLUSTER": json])
    }

    /// A directory with a good token file and a short one.
    final class Files: Sendable {
        let directory = TemporaryDirectory("cluster-settings")
        var token: String { directory.path + "/token" }
        var short: String { directory.path + "/short" }
        static let credential = "Zq8Lr2Vx6Nm4Kp0Wt9Yb3Hc7Jd1Gf5Sa"

        init() throws {
            try (Self.credential + "\n").write(toFile: token, atomically: true, encoding: .utf8)
            try "short\n".write(toFile: short, atomically: true, encoding: .utf8)
        }
    }

    @Test("without it, one node; with it, the node's place, URLs without a trailing slash, a 5 s lease by default")
    func accepted() throws {
        let files = try Files()
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).cluster == nil)
        let cluster = try #require(
            try Self.load(
                #"{"name": "auth", "node": "n-1.a", "etcd": ["http://10.0.0.5:2379/", "https://etcd.example:2379"], "advertiseUrl": "http://10.0.0.2:9099/", "replicationTokenFile": "\#(files.token)"}"#
            ).cluster)
        #expect(
            cluster
                == ClusterConfiguration(
                    name: "auth", node: "n-1.a", etcd: ["http://10.0.0.5:2379", "https://etcd.example:2379"],
                    advertiseURL: "http://10.0.0.2:9099", leaseSeconds: 5, replicationToken: Files.credential))
        #expect(cluster.leaderKey == "/hearth/auth/leader")
        #expect(cluster.memberKey == "/hearth/auth/members/n-1.a")
        #expect(cluster.synchronousKey == "/hearth/auth/sync")
        // One synchronous follower and a 10 s wait by default; both settable.
        #expect(cluster.synchronousFollowers == 1 && cluster.synchronousTimeout == .seconds(10))
        let asynchronous = try #require(
            try Self.load(
                #"{"name": "auth", "node": "n1", "etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099", "replicationTokenFile": "\#(files.token)", "synchronousFollowers": 0, "synchronousTimeoutSeconds": 30}"#
            ).cluster)
        #expect(asynchronous.synchronousFollowers == 0 && asynchronous.synchronousTimeout == .seconds(30))
    }

    @Test(
        "refused, naming the setting: a missing or odd name, no etcd, a URL with a path, an unknown key, a lease out of range, no or a short credential"
    )
    func refusals() throws {
        let files = try Files()
        let valid = #""etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099", "replicationTokenFile": "\#(files.token)""#
        for json in [
            #"{"node": "n1", \#(valid)}"#, #"{"name": "a/b", "node": "n1", \#(valid)}"#, #"{"name": "", "node": "n1", \#(valid)}"#,
            #"{"name": "c", "node": "n1", "etcd": [], "advertiseUrl": "http://a:9099", "replicationTokenFile": "\#(files.token)"}"#,
            #"{"name": "c", "node": "n1", "etcd": ["etcd:2379"], "advertiseUrl": "http://a:9099", "replicationTokenFile": "\#(files.token)"}"#,
            #"{"name": "c", "node": "n1", "etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099/path", "replicationTokenFile": "\#(files.token)"}"#,
            #"{"name": "c", "node": "n1", \#(valid), "leader": true}"#, #"{"name": "c", "node": "n1", \#(valid), "leaseSeconds": 1}"#,
            #"{"name": "c", "node": "n1", \#(valid), "leaseSeconds": "5"}"#, #""not an object""#,
            #"{"name": "c", "node": "n1", \#(valid), "synchronousFollowers": -1}"#,
            #"{"name": "c", "node": "n1", \#(valid), "synchronousFollowers": 9}"#,
            #"{"name": "c", "node": "n1", \#(valid), "synchronousTimeoutSeconds": 0}"#,
            #"{"name": "c", "node": "n1", "etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099"}"#,
            #"{"name": "c", "node": "n1", "etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099", "replicationTokenFile": "\#(files.short)"}"#,
        ] {
            #expect("\(json)") { try Self.load(json) } throws: { error in
                switch error {
                case ConfigurationError.invalid(let key, _): key == "cluster"
                default: false
                }
            }
        }
        // A token file that cannot be read says which file.
        #expect(throws: ConfigurationError.unreadable("/nonexistent/token")) {
            try Self.load(
                #"{"name": "c", "node": "n1", "etcd": ["http://e:2379"], "advertiseUrl": "http://a:9099", "replicationTokenFile": "/nonexistent/token"}"#
            )
        }
    }
}
