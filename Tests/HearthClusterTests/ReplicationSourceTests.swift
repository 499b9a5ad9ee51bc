import HearthDomain
import HearthStore
import HearthTesting
import Testing

@testable import HearthCluster

/// The leader's end of the replication channel: only with the credential, only on the leader,
/// records as soon as there are some, nothing (204) after waiting, a follower ahead or with a
/// head of its own refused, and a head it holds confirmed.
@Suite("cluster: the leader's replication endpoint")
struct ReplicationSourceTests {
    static let token = "Rb7Kx2Wq9Lm4Zp8Tn1Vc6Hd3Jf0Gs5Ya"
    static let bearer = "Bearer " + token
    static let zeroHash = String(repeating: "0", count: 64)

    static func request(
        _ after: UInt64?, hash: String? = zeroHash, durable: UInt64? = nil, node: String? = "n2", _ authorization: String? = bearer
    ) -> ReplicationSource.Request {
        ReplicationSource.Request(after: after, hash: hash, durable: durable, node: node, authorization: authorization)
    }

    @Test("refusals: no or a wrong credential, a missing head, a node that does not lead, a follower ahead")
    func refusals() async throws {
        let test = try TestStore()
        let source = ReplicationSource(store: test.store, token: Self.token, wait: .milliseconds(50))
        #expect(await source.answer(Self.request(0, nil)).status == 401)
        #expect(await source.answer(Self.request(0, "Bearer " + Self.token.dropLast() + "b")).status == 401)
        #expect(await source.answer(Self.request(0, Self.token)).status == 401)
        #expect(await source.answer(Self.request(nil)).status == 400)
        #expect(await source.answer(Self.request(0, hash: nil)).status == 400)
        #expect(await source.answer(Self.request(0, node: nil)).status == 400)
        test.store.writeAuthority.follow("n2")
        #expect(await source.answer(Self.request(0)).status == 409)
        test.store.writeAuthority.lead(term: 4, until: .now + .seconds(600))
        let ahead = await source.answer(Self.request(5))
        #expect(ahead.status == 409 && ahead.head == 0 && ahead.term == 4)
        #expect(test.store.synchronousCommit.confirmations.isEmpty)
        try test.close()
    }

    @Test("a batch as soon as a record commits; 204 with the head when none did in time")
    func longPoll() async throws {
        let test = try TestStore()
        test.store.writeAuthority.lead(term: 4, until: .now + .seconds(600))
        let source = ReplicationSource(store: test.store, token: Self.token, wait: .seconds(600))
        async let answer = source.answer(Self.request(0))
        try await Task.sleep(for: .milliseconds(100))
        try test.run(.createAccount(TestStore.project, UserID("u1")!, AccountCreated(method: .anonymous, createdAt: 0)))
        let batch = await answer
        #expect(batch.status == 200 && batch.head == 1 && batch.term == 4)
        #expect(batch.ledgerKey == test.store.replication.ledgerKeyFingerprint && batch.ledgerKey != nil)
        #expect(try ReplicationBatch(received: batch.body).records == 1)
        let quick = ReplicationSource(store: test.store, token: Self.token, wait: .milliseconds(50))
        let head = try test.store.ledgerHead()
        let none = await quick.answer(Self.request(1, hash: head.hash))
        #expect(none.status == 204 && none.head == 1 && none.body.isEmpty)
        #expect(test.store.synchronousCommit.confirmations["n2"]?.sequence == 1)
        try test.close()
    }

    @Test("the key entries of named streams, for a tail to drop: only with the credential, only on the leader, at most 256 streams")
    func keyEntries() async throws {
        let test = try TestStore()
        let source = ReplicationSource(store: test.store, token: Self.token)
        #expect(source.keyEntries(streams: "1", authorization: nil).status == 401)
        test.store.writeAuthority.follow("n2")
        #expect(source.keyEntries(streams: "1", authorization: Self.bearer).status == 409)
        test.store.writeAuthority.lead(term: 4, until: .now + .seconds(600))
        let first = try test.store.ledgerHead().sequence + 1
        try test.run(
            .createAccount(TestStore.project, UserID("u1")!, AccountCreated(method: .password, createdAt: 0, email: "u1@example.com")))
        for streams in [nil, "", "1,", "x", (1...257).map(String.init).joined(separator: ",")] {
            #expect(source.keyEntries(streams: streams, authorization: Self.bearer).status == 400, "\(String(describing: streams))")
        }
        let held = source.keyEntries(streams: "\(first)", authorization: Self.bearer)
        #expect(held.status == 200 && held.term == 4 && !held.body.isEmpty)
        #expect(try ReplicationBatch(received: held.body).records == 0)
        let none = source.keyEntries(streams: "\(first + 1),\(first + 9)", authorization: Self.bearer)
        #expect(none.status == 200 && none.body.isEmpty)
        try test.close()
    }

    @Test("a follower whose head is not the leader's record is refused as diverged, and confirms nothing")
    func diverged() async throws {
        let test = try TestStore()
        test.store.writeAuthority.lead(term: 4, until: .now + .seconds(600))
        try test.run(.createAccount(TestStore.project, UserID("u1")!, AccountCreated(method: .anonymous, createdAt: 0)))
        let first = try test.store.ledgerHead()
        try test.run(.createAccount(TestStore.project, UserID("u2")!, AccountCreated(method: .anonymous, createdAt: 0)))
        let source = ReplicationSource(store: test.store, token: Self.token, wait: .milliseconds(50))
        let other = await source.answer(Self.request(1, hash: String(repeating: "ab", count: 32)))
        #expect(other.status == 409 && other.refusal?.hasPrefix("diverged") == true)
        #expect(test.store.synchronousCommit.confirmations.isEmpty)
        // The follower's record 1 is the leader's: it gets record 2, having confirmed 1.
        let next = await source.answer(Self.request(1, hash: first.hash.uppercased()))
        #expect(next.status == 200 && next.head == 2)
        #expect(try ReplicationBatch(received: next.body).records == 1)
        #expect(test.store.synchronousCommit.confirmations["n2"]?.sequence == 1)
        try test.close()
    }

    @Test("a follower asking for more before its last batch is on disk confirms only what it says is durable")
    func durableConfirmsNoMore() async throws {
        let test = try TestStore()
        test.store.writeAuthority.lead(term: 4, until: .now + .seconds(600))
        for uid in ["u1", "u2", "u3"] {
            try test.run(.createAccount(TestStore.project, UserID(uid)!, AccountCreated(method: .anonymous, createdAt: 0)))
        }
        let source = ReplicationSource(store: test.store, token: Self.token, wait: .milliseconds(50))
        let second = try #require(try test.store.replication.hash(at: 2))
        let ahead = await source.answer(Self.request(2, hash: second, durable: 1))
        #expect(ahead.status == 200 && ahead.head == 3)
        #expect(try ReplicationBatch(received: ahead.body).records == 1)
        #expect(test.store.synchronousCommit.confirmations["n2"]?.sequence == 1)
        // Never more than where its ledger ends, whatever it says.
        _ = await source.answer(Self.request(2, hash: second, durable: 9))
        #expect(test.store.synchronousCommit.confirmations["n2"]?.sequence == 2)
        try test.close()
    }
}
