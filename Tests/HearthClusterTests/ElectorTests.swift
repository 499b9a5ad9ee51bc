import Foundation
import HearthDomain
import HearthStore
import HearthTesting
import Logging
import ServiceLifecycle
import Testing

@testable import HearthCluster

/// Election and fencing against a real etcd: one leader at a time, followers that refuse
/// writes, a clean hand-over, and a leader cut off from etcd that stops acknowledging before
/// its lease could be granted to anyone else.
@Suite("cluster: electing a leader through etcd", .serialized)
struct ElectorTests {
    /// One node: its own store, its elector, run in a ServiceGroup as the daemon runs it.
    final class Node: Sendable {
        let name: String
        let store: TestStore
        let elector: Elector
        let group: ServiceGroup
        let task: Task<Void, any Error>

        init(
            _ name: String, etcd: EtcdServer, leaseSeconds: Int64 = 5, synchronousTimeout: Duration = .seconds(10), store: TestStore? = nil
        ) throws {
            self.name = name
            self.store = try store ?? TestStore(label: name)
            var logger = Logger(label: "test")
            logger.logLevel = ProcessInfo.processInfo.environment["HEARTH_TEST_LOG"] == nil ? .critical : .debug
            let configuration = ClusterConfiguration(
                name: "test", node: name, etcd: [etcd.clientURL], advertiseURL: "http://\(name).test:9099", leaseSeconds: leaseSeconds,
                synchronousTimeout: synchronousTimeout)
            elector = Elector(configuration: configuration, store: self.store.store, logger: logger)
            group = ServiceGroup(configuration: .init(services: [elector], logger: logger))
            task = Task { [group] in try await group.run() }
        }

        var role: MemberRecord.Role { elector.state.snapshot.role }

        /// A sign-up on this node's store, as a leader accepts it: a loaded machine (every suite
        /// at once) may delay a renewal past the deadline, and then a write is refused until the
        /// next, as it should be; this tries for a while.
        /// (A write refused after its commit stays in the ledger, unacknowledged: each attempt is
        /// another account.)
        func writeAsLeader(_ uid: String) async throws {
            let start = ContinuousClock.now
            for attempt in 0... {
                do {
                    return try await write(attempt == 0 ? uid : "\(uid)-\(attempt)")
                } catch StoreError.notLeader where ContinuousClock.now - start < .seconds(10) {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }

        /// `follower` confirming this node's head every 20 ms, as its replication requests would,
        /// until the task is cancelled.
        func confirmed(by follower: String) -> Task<Void, Never> {
            Task { [store] in
                while !Task.isCancelled {
                    if let head = try? store.store.ledgerHead() { store.store.synchronousCommit.confirm(follower, through: head.sequence) }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
        }

        /// A sign-up on this node's store.
        func write(_ uid: String) async throws {
            try await store.store.execute(
                .createAccount(TestStore.project, UserID(uid)!, AccountCreated(method: .anonymous, createdAt: 0)), metadata: TestStore.user)
        }

        func stop() async {
            await group.triggerGracefulShutdown()
            _ = await task.result
        }
    }

    /// Polls `condition` every 50 ms until it holds or `seconds` pass; returns how long it took.
    @discardableResult
    static func waitUntil(_ seconds: Double, _ condition: () -> Bool) async throws -> Duration {
        let start = ContinuousClock.now
        while !condition() {
            guard ContinuousClock.now - start < .milliseconds(Int(seconds * 1000)) else {
                throw WaitTimedOut()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return ContinuousClock.now - start
    }

    struct WaitTimedOut: Error {}

    @Test("two nodes: one leads and writes, the other follows it and refuses writes")
    func oneLeader() async throws {
        let etcd = try EtcdServer()
        let a = try Node("a", etcd: etcd)
        let b = try Node("b", etcd: etcd)
        try await Self.waitUntil(10) {
            [a.role, b.role].sorted { $0.rawValue < $1.rawValue } == [.follower, .leader]
                && [a, b].allSatisfy { $0.elector.state.snapshot.leader != nil }
        }
        let (leader, follower) = a.role == .leader ? (a, b) : (b, a)
        #expect(follower.elector.state.snapshot.leader?.node == leader.name)
        #expect(follower.elector.state.snapshot.leader?.url == "http://\(leader.name).test:9099")
        #expect(follower.elector.state.snapshot.term == leader.elector.state.snapshot.term)
        try await leader.writeAsLeader("on-the-leader")
        // The term's first record names its leader and the head it started from.
        let term = try #require(leader.elector.state.snapshot.term)
        let first = try #require(try leader.store.store.audit.events(of: .cluster(.terms)).first)
        #expect(first.sequence == 1)
        #expect(
            first.payload
                == .termStarted(TermStarted(term: UInt64(term), node: leader.name, after: 0, afterHash: String(repeating: "0", count: 64))))
        #expect(try leader.store.store.ledgerTerm() == UInt64(term))
        let before = try follower.store.store.ledgerHead()
        await #expect(throws: StoreError.notLeader(leader: leader.name)) { try await follower.write("on-the-follower") }
        #expect(try follower.store.store.ledgerHead() == before)
        // Both registered themselves for `hearth cluster status`.
        let members = try await EtcdClient(endpoints: [etcd.clientURL]).list(prefix: "/hearth/test/members/")
        #expect(Set(members.compactMap { MemberRecord($0.value)?.node }) == ["a", "b"])
        await a.stop()
        await b.stop()
        try a.store.close()
        try b.store.close()
    }

    @Test("only a node the synchronous set names may take over; its term acknowledges nothing until a follower holds its ledger")
    func onlySynchronousNodesLead() async throws {
        let etcd = try EtcdServer()
        let client = EtcdClient(endpoints: [etcd.clientURL])
        // The last leader ("gone") had b as its synchronous follower.
        let last = SynchronousSet(leader: "gone", term: 1, followers: ["b"], required: 1, asynchronous: false)
        try await client.put("/hearth/test/sync", last.encoded)
        let a = try Node("a", etcd: etcd, synchronousTimeout: .milliseconds(300))
        try await Self.waitUntil(10) { a.elector.state.snapshot.etcdReachable && !a.elector.state.snapshot.mayLead }
        // a holds the leader key's absence for several ticks and never campaigns.
        try await Task.sleep(for: .seconds(2))
        #expect(a.role == .follower && a.elector.state.snapshot.leader == nil)
        let b = try Node("b", etcd: etcd, synchronousTimeout: .milliseconds(300))
        try await Self.waitUntil(10) { b.role == .leader && a.elector.state.snapshot.leader?.node == "b" }
        let term = try #require(b.elector.state.snapshot.term)
        let recorded = try #require(try await client.get("/hearth/test/sync").flatMap { SynchronousSet($0.value) })
        #expect(recorded == SynchronousSet(leader: "b", term: term, followers: [], required: 1, asynchronous: false))
        // The term's start is its first write, committed before any other.
        try await Self.waitUntil(10) { (try? b.store.store.ledgerTerm()) == UInt64(term) }
        // No follower holds b's ledger yet: its writes are not acknowledged.
        await #expect(throws: StoreError.notReplicated) { try await b.write("unconfirmed") }
        // a confirms b's head (as its replication requests do): it joins the set, and writes are acknowledged again.
        let head = try b.store.store.ledgerHead()
        b.store.store.synchronousCommit.confirm("a", through: head.sequence)
        try await Self.waitUntil(10) { b.elector.state.snapshot.synchronous?.followers == ["a"] }
        let joined = try #require(try await client.get("/hearth/test/sync").flatMap { SynchronousSet($0.value) })
        #expect(joined.followers == ["a"] && joined.required == 1 && joined.mayLead("a") && !joined.mayLead("gone"))
        async let written: Void = b.write("confirmed")
        try await Task.sleep(for: .milliseconds(50))
        b.store.store.synchronousCommit.confirm("a", through: head.sequence + 1)
        try await written
        await a.stop()
        await b.stop()
        try a.store.close()
        try b.store.close()
    }

    @Test("a node whose projections fail to fold does not campaign, however long no one leads; one that folds is elected")
    func failingFoldDoesNotCampaign() async throws {
        let etcd = try EtcdServer()
        // A record sealed under another data directory's key: appended, it can not be folded here.
        let other = try TestStore(label: "other")
        try other.run(
            .createAccount(TestStore.project, UserID("u1")!, AccountCreated(method: .password, createdAt: 0, email: "u1@example.com")))
        let failing = try TestStore(label: "a")
        failing.store.writeAuthority.follow("other")
        try await failing.store.replication.apply(try ReplicationBatch(received: other.store.replication.batch(after: 0).bytes))
        await #expect(throws: (any Error).self) { try await failing.store.replication.folded() }
        let a = try Node("a", etcd: etcd, store: failing)
        // Several ticks (a second each) with the leader key free.
        try await Task.sleep(for: .seconds(4))
        #expect(a.role == .follower && a.elector.state.snapshot.leader == nil)
        #expect(a.elector.state.snapshot.foldFailure != nil)
        let b = try Node("b", etcd: etcd)
        try await Self.waitUntil(15) { b.role == .leader && a.elector.state.snapshot.leader?.node == "b" }
        #expect(a.role == .follower)
        await a.stop()
        await b.stop()
        // The failing store's events can not be read back for the schema check: closed as is.
        failing.store.close()
        try b.store.close()
        try other.close()
    }

    @Test("a clean stop hands over within a few ticks, to a later term")
    func handOver() async throws {
        let etcd = try EtcdServer()
        let a = try Node("a", etcd: etcd)
        try await Self.waitUntil(10) { a.role == .leader }
        let b = try Node("b", etcd: etcd)
        try await Self.waitUntil(10) { b.elector.state.snapshot.leader?.node == "a" }
        let firstTerm = try #require(a.elector.state.snapshot.term)
        // b holds a's ledger (as its replication would confirm), so a names it synchronous: only
        // then may b take over from a (alone, a acknowledged writes no one else held).
        a.store.store.synchronousCommit.confirm("b", through: try a.store.store.ledgerHead().sequence)
        try await Self.waitUntil(10) { a.elector.state.snapshot.synchronous?.followers == ["b"] }
        await a.stop()
        await #expect(throws: StoreError.notLeader(leader: nil)) { try await a.write("after-stepping-down") }
        let took = try await Self.waitUntil(10) { b.role == .leader }
        // Without the clean stop, b would wait out a's 5 s lease (at least 4 s after its last renewal).
        #expect(took < .seconds(3))
        #expect(try #require(b.elector.state.snapshot.term) > firstTerm)
        // a, back as b's follower, holds b's ledger: b acknowledges again.
        let follower = b.confirmed(by: "a")
        defer { follower.cancel() }
        try await b.writeAsLeader("on-the-new-leader")
        await b.stop()
        try a.store.close()
        try b.store.close()
    }

    @Test("cut off from etcd, the leader stops acknowledging before its lease could lapse; back, it leads again")
    func fencing() async throws {
        let etcd = try EtcdServer()
        let a = try Node("a", etcd: etcd)
        try await Self.waitUntil(10) { a.role == .leader }
        let firstTerm = try #require(a.elector.state.snapshot.term)
        try await a.writeAsLeader("before")
        // A blip shorter than the margin costs nothing.
        etcd.pause()
        try await Task.sleep(for: .milliseconds(500))
        etcd.resume()
        try await a.writeAsLeader("after-a-blip")
        try await Task.sleep(for: .milliseconds(1_500))
        let cutOff = ContinuousClock.now
        etcd.pause()
        // Every renewal that succeeded was sent before the cut: the deadline is at most 5 s - 1 s after it.
        try await Task.sleep(until: cutOff + .milliseconds(4_050))
        await #expect(throws: StoreError.notLeader(leader: nil)) { try await a.write("cut-off") }
        // ...and that is before etcd could have expired the lease (5 s after it last heard from a).
        #expect(ContinuousClock.now - cutOff < .seconds(5))
        // Long enough for etcd to expire the lease once it runs again.
        try await Task.sleep(until: cutOff + .seconds(6))
        etcd.resume()
        try await Self.waitUntil(15) { a.role == .leader && (a.elector.state.snapshot.term ?? 0) > firstTerm }
        try await a.writeAsLeader("after")
        #expect(a.elector.state.snapshot.fenced >= 1)
        await a.stop()
        try a.store.close()
    }
}
