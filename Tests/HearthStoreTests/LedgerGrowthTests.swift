import HearthDomain
import HearthTesting
import Synchronization
import Testing

@testable import HearthStore

/// A replication long poll wakes when a commit takes the head past what its follower holds, at
/// once if one already did, and otherwise when its time is up.
@Suite("store: waking the long polls when the ledger grows")
struct LedgerGrowthTests {
    @Test("woken by a commit past the sequence, not by one up to it; at once when already past; else after the timeout")
    func wakes() async throws {
        let growth = LedgerGrowth()
        let start = ContinuousClock.now
        let woken = Woken()
        let waiting = Task {
            await growth.wait(beyond: 5, atMost: .seconds(600))
            woken.value.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(50))
        growth.grew(to: 5)
        try await Task.sleep(for: .milliseconds(50))
        #expect(!woken.value.withLock { $0 })
        growth.grew(to: 6)
        await waiting.value
        // Woken by the commit, not by the (generous: hundreds of tests share the cores) timeout.
        #expect(ContinuousClock.now - start < .seconds(300))
        let past = ContinuousClock.now
        await growth.wait(beyond: 5, atMost: .seconds(600))
        #expect(ContinuousClock.now - past < .seconds(300))
        let timed = ContinuousClock.now
        await growth.wait(beyond: 6, atMost: .milliseconds(100))
        #expect(ContinuousClock.now - timed >= .milliseconds(100))
    }

    @Test("a store's commit wakes a long poll past its old head; the head it tells can fall")
    func storeCommitWakes() async throws {
        let test = try TestStore()
        defer { try? test.close() }
        let before = try test.store.ledgerHead().sequence
        let start = ContinuousClock.now
        let waiting = Task { await test.store.ledgerGrowth.wait(beyond: before, atMost: .seconds(600)) }
        try await Task.sleep(for: .milliseconds(50))
        try test.run(.createAccount(TestStore.project, UserID("grown")!, AccountCreated(method: .anonymous, createdAt: 0)))
        await waiting.value
        #expect(ContinuousClock.now - start < .seconds(300))

        // A dropped tail: the head falls, and a long poll at the new head waits again.
        let growth = LedgerGrowth()
        growth.grew(to: 6)
        growth.grew(to: 3)
        let timed = ContinuousClock.now
        await growth.wait(beyond: 3, atMost: .milliseconds(100))
        #expect(ContinuousClock.now - timed >= .milliseconds(100))
    }
}

private final class Woken: Sendable {
    let value = Mutex(false)
}
