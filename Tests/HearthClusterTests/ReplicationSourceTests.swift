import HearthDomain
import HearthStore
import HearthTesting
import Testing

@testable import HearthCluster

/// The leader's end of the replication channel: only with the credential, only on the leader,
/// records as soon as there are some, nothing (204) after waiting, and a follower ahead refused.
@Suite("cluster: the leader's replication endpoint")
struct ReplicationSourceTests {
    static let token = "Rb7Kx2Wq9Lm4Zp8Tn1Vc6Hd3Jf0Gs5Ya"

    @Test("refusals: no or a wrong credential, a missing head, a node that does not lead, a follower ahead")
    func refusals() async throws {
        let test = try TestStore()
        let source = ReplicationSource(store: test.store, token: Self.token, wait: .milliseconds(50))
        #expect(await source.answer(after: 0, authorization: nil).status == 401)
        #expect(await source.answer(after: 0, authorization: "Bearer " + Self.token.dropLast() + "b").status == 401)
        #expect(await source.answer(after: 0, authorization: Self.token).status == 401)
        #expect(await source.answer(after: nil, authorization: "Bearer " + Self.token).status == 400)
        test.store.writeAuthority.follow("n2")
        #expect(await source.answer(after: 0, authorization: "Bearer " + Self.token).status == 409)
        test.store.writeAuthority.lead(term: 4, until: .now + .seconds(600))
        let ahead = await source.answer(after: 5, authorization: "Bearer " + Self.token)
        #expect(ahead.status == 409 && ahead.head == 0 && ahead.term == 4)
        try test.close()
    }

    @Test("a batch as soon as a record commits; 204 with the head when none did in time")
    func longPoll() async throws {
        let test = try TestStore()
        test.store.writeAuthority.lead(term: 4, until: .now + .seconds(600))
        let source = ReplicationSource(store: test.store, token: Self.token, wait: .seconds(5))
        async let answer = source.answer(after: 0, authorization: "Bearer " + Self.token)
        try await Task.sleep(for: .milliseconds(100))
        try test.run(.createAccount(TestStore.project, UserID("u1")!, AccountCreated(method: .anonymous, createdAt: 0)))
        let batch = await answer
        #expect(batch.status == 200 && batch.head == 1 && batch.term == 4)
        #expect(batch.ledgerKey == test.store.replication.ledgerKeyFingerprint && batch.ledgerKey != nil)
        #expect(try ReplicationBatch(received: batch.body).records == 1)
        let quick = ReplicationSource(store: test.store, token: Self.token, wait: .milliseconds(50))
        let none = await quick.answer(after: 1, authorization: "Bearer " + Self.token)
        #expect(none.status == 204 && none.head == 1 && none.body.isEmpty)
        try test.close()
    }
}
