import Foundation
import HearthDomain
import HearthTesting
import Testing

@testable import HearthStore

/// The store's side of fencing: a follower writes nothing, a leader writes until its deadline,
/// and a write that commits after the deadline passed is not acknowledged.
@Suite("store: only a node with the right to write writes and acknowledges")
struct WriteAuthorityTests {
    static func signUp(_ uid: String) -> Command {
        .createAccount(TestStore.project, UserID(uid)!, AccountCreated(method: .anonymous, createdAt: 0))
    }

    @Test("a single node always writes; a follower refuses, naming the leader, and writes nothing")
    func followers() async throws {
        let test = try TestStore()
        #expect(test.store.writeAuthority.standing == .always)
        try await test.store.execute(Self.signUp("alone"), metadata: TestStore.user)
        test.store.writeAuthority.follow("n2")
        let head = try test.store.ledgerHead()
        await #expect(throws: StoreError.notLeader(leader: "n2")) {
            try await test.store.execute(Self.signUp("refused"), metadata: TestStore.user)
        }
        #expect(throws: StoreError.notLeader(leader: "n2")) { try test.run(Self.signUp("refused-too")) }
        #expect(try test.store.ledgerHead() == head)
        // Reads go on.
        #expect(try test.account("alone") != nil)
        try test.close()
    }

    @Test("a leader writes until its deadline, and nothing once it passed")
    func deadlines() async throws {
        let test = try TestStore()
        test.store.writeAuthority.lead(term: 3, until: .now + .seconds(600))
        try await test.store.execute(Self.signUp("in-term"), metadata: TestStore.user)
        test.store.writeAuthority.lead(term: 3, until: .now - .milliseconds(1))
        let head = try test.store.ledgerHead()
        await #expect(throws: StoreError.notLeader(leader: nil)) {
            try await test.store.execute(Self.signUp("past-deadline"), metadata: TestStore.user)
        }
        #expect(try test.store.ledgerHead() == head)
        try test.close()
    }

    @Test("a write that commits after the deadline passed is not acknowledged (an unacknowledged tail)")
    func lateCommit() async throws {
        let test = try TestStore()
        test.store.writeAuthority.lead(term: 3, until: .now + .seconds(600))
        let head = try test.store.ledgerHead()
        await #expect(throws: StoreError.notLeader(leader: nil)) {
            try await test.store.transaction(metadata: TestStore.user) { tx in
                try tx.execute(Self.signUp("late"))
                // The writer is slow (a long fsync, say): the deadline passes before the commit.
                test.store.writeAuthority.lead(term: 3, until: .now - .milliseconds(1))
            }
        }
        #expect(try test.store.ledgerHead().sequence == head.sequence + 1)
        try test.close()
    }
}
