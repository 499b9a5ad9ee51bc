import Foundation
import HearthDomain
import HearthTesting
import Testing

@testable import HearthStore

/// Each term's first record names its leader: nothing of the term is written before it, a term
/// is recorded once, never one older than the ledger holds, and a follower refuses a record that
/// starts an older term than one it holds.
@Suite("store: each term starts with a cluster.term_started record")
struct TermStartTests {
    @Test("an elected node writes nothing before its term's start, then records it with the head it starts from")
    func firstRecord() async throws {
        let test = try TestStore()
        defer { try? test.close() }
        try await test.store.execute(WriteAuthorityTests.signUp("before"), metadata: TestStore.user)
        let before = try test.store.ledgerHead()
        test.store.writeAuthority.begin(term: 12, until: .now + .seconds(600))
        await #expect(throws: StoreError.notLeader(leader: nil)) {
            try await test.store.execute(WriteAuthorityTests.signUp("too-early"), metadata: TestStore.user)
        }
        let started = try #require(try await test.store.startTerm(12, node: "hearth-a"))
        #expect(started.sequence == before.sequence + 1)
        #expect(started.stream == .cluster(.terms))
        #expect(started.payload == .termStarted(TermStarted(term: 12, node: "hearth-a", after: before.sequence, afterHash: before.hash)))
        #expect(try test.store.ledgerTerm() == 12)
        try await test.store.execute(WriteAuthorityTests.signUp("in-term"), metadata: TestStore.user)
        // A leftover attempt for another term than the one led writes nothing.
        await #expect(throws: StoreError.notLeader(leader: nil)) { try await test.store.startTerm(13, node: "hearth-a") }
        // Recorded once: a retry (after a timeout waiting for the followers) adds nothing.
        #expect(try await test.store.startTerm(12, node: "hearth-a") == nil)
        #expect(try test.store.ledgerHead().sequence == started.sequence + 1)
        #expect(try test.store.audit.verify().isIntact)
    }

    @Test("a term no later than the ledger's latest is refused, and its node writes nothing")
    func staleTerm() async throws {
        let test = try TestStore()
        defer { try? test.close() }
        test.store.writeAuthority.begin(term: 20, until: .now + .seconds(600))
        try await test.store.startTerm(20, node: "hearth-a")
        test.store.writeAuthority.begin(term: 19, until: .now + .seconds(600))
        let head = try test.store.ledgerHead()
        await #expect(throws: StoreError.replication(ClusterTermError.staleTerm(19, current: 20).description)) {
            try await test.store.startTerm(19, node: "hearth-b")
        }
        await #expect(throws: StoreError.notLeader(leader: nil)) {
            try await test.store.execute(WriteAuthorityTests.signUp("stale"), metadata: TestStore.user)
        }
        #expect(try test.store.ledgerHead() == head)
        #expect(try test.store.ledgerTerm() == 20)
    }

    @Test("the rule: later terms only, each naming its node")
    func rule() throws {
        let started = TermStarted(term: 5, node: "n1", after: 0, afterHash: "")
        #expect(try ClusterTerms.start(started, after: nil) == [.termStarted(started)])
        #expect(try ClusterTerms.start(started, after: 4) == [.termStarted(started)])
        #expect(throws: ClusterTermError.staleTerm(5, current: 5)) { try ClusterTerms.start(started, after: 5) }
        #expect(throws: ClusterTermError.staleTerm(5, current: 9)) { try ClusterTerms.start(started, after: 9) }
        #expect(throws: ClusterTermError.unnamedNode) {
            try ClusterTerms.start(TermStarted(term: 6, node: "", after: 0, afterHash: ""), after: 5)
        }
    }

    @Test("a follower refuses a record that starts an older term than one it holds, and applies nothing of its batch")
    func followerRefusesOlderTerm() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        leader.store.writeAuthority.begin(term: 8, until: .now + .seconds(600))
        try await leader.store.startTerm(8, node: "hearth-a")
        try await leader.store.execute(WriteAuthorityTests.signUp("in-term-8"), metadata: TestStore.user)
        let follower = try ReplicationTests.Follower(of: leader)
        try await follower.catchUp(with: leader.store, limit: 100)
        #expect(try follower.store.ledgerTerm() == 8)
        let before = try follower.store.ledgerHead()

        // A ledger that breaks the rule (only a bug or a forger writes one): after term 8, a
        // record that starts term 7, then a write of it. Its chain continues the follower's.
        try leader.store.appendAsRecorded(
            [.termStarted(TermStarted(term: 7, node: "hearth-b", after: before.sequence, afterHash: before.hash))],
            to: .cluster(.terms), at: 1_000)
        leader.store.writeAuthority.lead(term: 7, until: .now + .seconds(600))
        try await leader.store.execute(WriteAuthorityTests.signUp("in-term-7"), metadata: TestStore.user)
        let batch = try ReplicationBatch(received: leader.store.replication.batch(after: before.sequence).bytes)
        #expect(batch.records == 2)
        await #expect(throws: StoreError.self) { try await follower.store.replication.apply(batch) }
        #expect(try follower.store.ledgerHead() == before)
        #expect(try follower.store.ledgerTerm() == 8)
    }
}
