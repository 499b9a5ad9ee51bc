import HearthTesting
import Testing

@testable import HearthCluster

/// The gateway calls an election makes, against a real etcd on loopback.
@Suite("cluster: etcd's v3 JSON gateway", .serialized)
struct EtcdClientTests {
    @Test("leases: granted, renewed, revoked; a revoked lease renews to nothing")
    func leases() async throws {
        let etcd = try EtcdServer()
        let client = EtcdClient(endpoints: [etcd.clientURL])
        let lease = try await client.grant(ttlSeconds: 5)
        #expect(lease.ttl >= 5)
        #expect(try await client.keepAlive(lease.id) == lease.ttl)
        try await client.revoke(lease.id)
        #expect(try await client.keepAlive(lease.id) == nil)
        // Revoking twice is not an error.
        try await client.revoke(lease.id)
    }

    @Test("create-only: the first put wins and learns its revision; the next finds the holder")
    func createOnly() async throws {
        let etcd = try EtcdServer()
        let client = EtcdClient(endpoints: [etcd.clientURL])
        let lease = try await client.grant(ttlSeconds: 5)
        guard case .created(let revision) = try await client.create("/t/leader", Array("a".utf8), lease: lease.id) else {
            Issue.record("the first create did not win")
            return
        }
        guard case .exists(let holder?) = try await client.create("/t/leader", Array("b".utf8), lease: lease.id) else {
            Issue.record("the second create did not find the holder")
            return
        }
        #expect(holder.value == Array("a".utf8))
        #expect(holder.createRevision == revision)
        #expect(holder.lease == lease.id)
        // A delete names the key's creation: an older revision deletes nothing.
        try await client.delete("/t/leader", ifCreatedAt: revision - 1)
        #expect(try await client.get("/t/leader") != nil)
        try await client.delete("/t/leader", ifCreatedAt: revision)
        #expect(try await client.get("/t/leader") == nil)
        // Revoking the lease deletes the keys it holds.
        guard case .created = try await client.create("/t/leader", Array("c".utf8), lease: lease.id) else {
            Issue.record("no create after the delete")
            return
        }
        try await client.revoke(lease.id)
        #expect(try await client.get("/t/leader") == nil)
    }

    @Test("a prefix lists its keys and no others")
    func prefixes() async throws {
        let etcd = try EtcdServer()
        let client = EtcdClient(endpoints: [etcd.clientURL])
        for key in ["/c/a/members/n1", "/c/a/members/n2", "/c/ab/members/n3", "/c/a/leader"] {
            try await client.put(key, Array(key.utf8))
        }
        let members = try await client.list(prefix: "/c/a/members/")
        #expect(members.map(\.key) == ["/c/a/members/n1", "/c/a/members/n2"])
        #expect(EtcdClient.prefixEnd([0x61, 0xFF]) == [0x62])
    }

    @Test("an endpoint that does not answer is skipped for the next")
    func failover() async throws {
        let etcd = try EtcdServer()
        let closed = "http://127.0.0.1:\(try freePort())"
        let client = EtcdClient(endpoints: [closed, etcd.clientURL])
        try await client.put("/f/key", [1, 2, 3])
        #expect(try await client.get("/f/key")?.value == [1, 2, 3])
        let nowhere = EtcdClient(endpoints: [closed], timeout: .milliseconds(500))
        await #expect(throws: EtcdError.self) { try await nowhere.get("/f/key") }
    }
}
