import HearthDomain
import HearthTesting
import Synchronization
import Testing

@testable import HearthStore

/// A cluster leader acknowledges a write only once its synchronous followers confirm it: it
/// waits for every one of them, times out into a refusal rather than acknowledging alone, and
/// refuses new writes until the one that timed out is confirmed.
@Suite("store: a leader acknowledges once its synchronous followers hold the write")
struct SynchronousCommitTests {
    static func signUp(_ uid: String) -> Command { WriteAuthorityTests.signUp(uid) }

    @Test("no requirement: acknowledged at once; a requirement: only once every follower named confirms")
    func waitsForEveryFollower() async throws {
        let commit = SynchronousCommit()
        commit.timeout = .seconds(600)
        try await commit.acknowledge(7)
        commit.require(.followers(["b", "c"], atLeast: 2))
        let done = Done()
        let acknowledged = Task {
            try await commit.acknowledge(3)
            done.value.withLock { $0 = true }
        }
        commit.confirm("b", through: 5)
        commit.confirm("x", through: 9)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!done.value.withLock { $0 })
        commit.confirm("c", through: 2)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!done.value.withLock { $0 })
        commit.confirm("c", through: 3)
        try await acknowledged.value
        #expect(done.value.withLock { $0 })
        // Fewer followers than required: nothing is acknowledged, whatever they confirmed.
        commit.require(.followers(["b"], atLeast: 2))
        commit.timeout = .milliseconds(100)
        await #expect(throws: StoreError.notReplicated) { try await commit.acknowledge(1) }
    }

    @Test("a write not confirmed in time is refused; later writes are refused before they commit, until it is confirmed")
    func timeoutRefusesUntilConfirmed() async throws {
        let test = try TestStore()
        let commit = test.store.synchronousCommit
        commit.timeout = .milliseconds(150)
        commit.require(.followers(["b"], atLeast: 1))
        await #expect(throws: StoreError.notReplicated) {
            try await test.store.execute(Self.signUp("unconfirmed"), metadata: TestStore.user)
        }
        #expect(commit.isStalled && commit.timedOut == 1)
        // Committed (an unacknowledged write may take effect), but the next is not even written.
        let head = try test.store.ledgerHead()
        #expect(head.sequence == 1)
        await #expect(throws: StoreError.notReplicated) {
            try await test.store.execute(Self.signUp("refused"), metadata: TestStore.user)
        }
        #expect(try test.store.ledgerHead() == head)
        commit.confirm("b", through: 1)
        #expect(!commit.isStalled)
        // Generous from here: hundreds of tests share the cores, and this write must not time out.
        commit.timeout = .seconds(600)
        async let written = test.store.execute(Self.signUp("accepted"), metadata: TestStore.user)
        try await Task.sleep(for: .milliseconds(30))
        commit.confirm("b", through: 2)
        #expect(try await written.count == 1)
        try test.close()
    }

    @Test("a new term answers the writes still waiting: not acknowledged")
    func resetAbandonsWaiters() async throws {
        let commit = SynchronousCommit()
        commit.require(.followers(["b"], atLeast: 1))
        let waiting = Task { try await commit.acknowledge(4) }
        while commit.waiting == 0 { try await Task.sleep(for: .milliseconds(1)) }
        commit.reset(.none)
        await #expect(throws: StoreError.notLeader(leader: nil)) { try await waiting.value }
        #expect(commit.confirmations.isEmpty)
        try await commit.acknowledge(4)
    }

    @Test("many writes waiting at once are each released by the confirmation that covers them")
    func manyWaiters() async throws {
        let commit = SynchronousCommit()
        commit.timeout = .seconds(600)
        commit.require(.followers(["b"], atLeast: 1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sequence in 1...200 { group.addTask { try await commit.acknowledge(UInt64(sequence)) } }
            for through in stride(from: 20, through: 200, by: 20) {
                try await Task.sleep(for: .milliseconds(2))
                commit.confirm("b", through: UInt64(through))
            }
            try await group.waitForAll()
        }
        #expect(commit.timedOut == 0)
    }
}

private final class Done: Sendable {
    let value = Mutex(false)
}
