import Foundation
import HearthDomain
import HearthTesting
import PropertyBased
import Testing

@testable import HearthStore

/// A follower applying its leader's records: the same chain, the same key table, the same
/// projections at the same head, whatever the history and however it is cut into batches; and
/// nothing applied from a batch that does not continue its ledger.
@Suite("store: replicating the ledger to a follower")
struct ReplicationTests {
    typealias Person = ForgettingProperties.Person
    static let project = TestStore.project

    /// A follower's store: an empty data directory holding the leader's ledger key (as one
    /// restored from the leader's backup does).
    final class Follower: Sendable {
        let directory = TemporaryDirectory("follower")
        let store: AccountStore

        init(of leader: TestStore) throws {
            try FileManager.default.copyItem(atPath: leader.dataDirectory.ledgerKeyFile, toPath: directory.path + "/ledger-key")
            store = try DataDirectory(directory.path).open(as: "follower")
            store.writeAuthority.follow("leader")
        }

        /// Applies the leader's records in batches of at most `limit` until it is at the leader's head.
        func catchUp(with leader: AccountStore, limit: Int) async throws {
            while try store.ledgerHead().sequence < leader.ledgerHead().sequence {
                let batch = try leader.replication.batch(after: try store.ledgerHead().sequence, limit: limit)
                let received = try ReplicationBatch(received: batch.bytes)
                #expect(received.records == batch.records)
                // What the follower may ask for next while it appends: the head the batch makes.
                #expect(try await store.replication.apply(received).head == received.last)
            }
        }

        deinit { store.close() }
    }

    /// A history over three people with personal data, ending in one's deletion and the uid
    /// created again (a second generation of its key); `between` runs after each command (a
    /// follower catching up while it happens).
    static func record(_ numbers: [Int], on test: TestStore, between: () async throws -> Void = {}) async throws {
        let people = (0..<3).map(Person.init)
        for person in people { try test.run(ForgettingProperties.command(0, person), as: person.metadata) }
        for n in numbers {
            let person = people[(n / 10) % people.count]
            test.clock.advance(milliseconds: 1_000)
            _ = try? test.run(ForgettingProperties.command(n, person), as: person.metadata)
            try await between()
        }
        try test.run(.deleteAccount(project, people[0].uid, by: .user), as: people[0].metadata)
        try await between()
        try test.run(ForgettingProperties.command(0, people[0]), as: people[0].metadata)
        try test.run(.changeProjectConfig(project, ProjectConfigChange(anonymousCleanup: true)), as: TestStore.admin)
    }

    static func expectSame(_ follower: AccountStore, _ leader: AccountStore) async throws {
        // The follower's projections fold behind its ledger.
        try await follower.replication.folded()
        #expect(try follower.ledgerHead() == leader.ledgerHead())
        #expect(try follower.maintenance.digest() == leader.maintenance.digest())
        #expect(try follower.audit.verify().isIntact)
        #expect(try StoreProbes.streamKeys(follower).live == StoreProbes.streamKeys(leader).live)
        #expect(try StoreProbes.streamKeys(follower).destroyed == StoreProbes.streamKeys(leader).destroyed)
        for index in 0..<3 {
            let stream = StreamID.account(project, Person(index: index).uid)
            let (followed, led) = (try follower.audit.events(of: stream), try leader.audit.events(of: stream))
            #expect(followed.map(\.payload) == led.map(\.payload))
            #expect(followed.map(\.isErased) == led.map(\.isErased))
        }
    }

    @Test("whatever the history and the batches, the follower's chain, keys and projections are the leader's")
    func sameAtEveryHead() async {
        await propertyCheck(count: 10, input: Gen.int(in: 0...1_000_000).array(of: 1...30), Gen.int(in: 1...12)) { numbers, limit in
            do {
                let leader = try TestStore(label: "leader")
                defer { try? leader.close() }
                let follower = try Follower(of: leader)
                // Caught up every few commands, so keys arrive live and are destroyed on the follower by the deletion it applies.
                var commands = 0
                try await Self.record(numbers, on: leader) {
                    commands += 1
                    if commands % limit == 0 { try await follower.catchUp(with: leader.store, limit: limit) }
                }
                try await follower.catchUp(with: leader.store, limit: limit)
                try await Self.expectSame(follower.store, leader.store)
                // The erased account's earlier events are erased on the follower too.
                let first = try follower.store.audit.events(of: .account(Self.project, Person(index: 0).uid))
                #expect(first.first?.isErased == true)
                #expect(first.last?.isErased == false)
            } catch {
                Issue.record("infrastructure error: \(error)")
            }
        }
    }

    @Test("a follower whose ledger differs refuses the batch and applies nothing of it")
    func divergence() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([5, 17, 23], on: leader)
        let follower = try Follower(of: leader)
        try await follower.catchUp(with: leader.store, limit: 4)
        // The follower was a leader once, and wrote a record no one else has.
        follower.store.writeAuthority.lead(term: 1, until: .now + .seconds(600))
        try await follower.store.execute(
            .createAccount(Self.project, UserID("tail")!, AccountCreated(method: .anonymous, createdAt: 0)), metadata: TestStore.user)
        follower.store.writeAuthority.follow("leader")
        let head = try follower.store.ledgerHead()
        try leader.run(.createAccount(Self.project, UserID("next")!, AccountCreated(method: .anonymous, createdAt: 0)))
        let batch = try leader.store.replication.batch(after: head.sequence - 1)
        await #expect(throws: StoreError.self) { try await follower.store.replication.apply(batch) }
        #expect(try follower.store.ledgerHead() == head)
    }

    @Test("a former leader drops its unacknowledged tail, folds again, and then holds exactly the leader's ledger")
    func droppedTail() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([5, 17, 23], on: leader)
        let follower = try Follower(of: leader)
        try await follower.catchUp(with: leader.store, limit: 4)
        let shared = try follower.store.ledgerHead()
        // The follower led for a while: new accounts (new keys), and changes to a shared one.
        follower.store.writeAuthority.lead(term: 1, until: .now + .seconds(600))
        let person = Person(index: 1)
        for n in [0, 1, 3] {
            let uid = UserID("tail-\(n)")!
            try await follower.store.execute(
                .createAccount(Self.project, uid, AccountCreated(method: .password, createdAt: 0, email: "t\(n)@example.com")),
                metadata: TestStore.user)
            try await follower.store.execute(ForgettingProperties.command(n + 1, person), metadata: person.metadata)
        }
        follower.store.writeAuthority.follow("leader")
        // Meanwhile the leader went on: its records after the shared head differ.
        try leader.run(
            .createAccount(Self.project, UserID("next")!, AccountCreated(method: .password, createdAt: 0, email: "n@example.com")))
        try leader.run(ForgettingProperties.command(7, person), as: person.metadata)

        let dropped = try await follower.store.replication.dropTail(after: shared.sequence)
        #expect(dropped.count == 6 && dropped.first?.sequence == shared.sequence + 1)
        #expect(try follower.store.ledgerHead() == shared)
        // Were it to lead again, its long polls would wait for what follows the shared head,
        // not answer at once for records it dropped.
        let waited = ContinuousClock.now
        await follower.store.ledgerGrowth.wait(beyond: shared.sequence, atMost: .milliseconds(100))
        #expect(ContinuousClock.now - waited >= .milliseconds(100))
        try await follower.store.replication.folded()
        try await follower.catchUp(with: leader.store, limit: 3)
        try await Self.expectSame(follower.store, leader.store)
        #expect(try follower.store.read { try $0.account(UserID("tail-0")!, in: Self.project) } == nil)
    }

    @Test("the projections fold behind the ledger; a node that followed folds what it holds before its first write as leader")
    func promotedFollowerFoldsFirst() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([5, 17], on: leader)
        let held = UserID("held")!
        try leader.run(.createAccount(Self.project, held, AccountCreated(method: .password, createdAt: 0, email: "held@example.com")))
        // An anonymous account, due for cleanup (the project has it on): its schedule entry too
        // is folded late, and announced to the scheduler once folded.
        try leader.run(.createAccount(Self.project, UserID("anonymous")!, AccountCreated(method: .anonymous, createdAt: 0)))
        let follower = try Follower(of: leader)
        try await follower.store.followerFold.paused {
            // The fold held back: the ledger holds every record, the projections none yet.
            try await follower.catchUp(with: leader.store, limit: 5)
            #expect(try follower.store.ledgerHead() == leader.store.ledgerHead())
            #expect(try follower.store.read { try $0.account(held, in: Self.project) } == nil)
            follower.store.writeAuthority.lead(term: 1, until: .now + .seconds(600))
            // Decided on everything the ledger holds: the address is taken, as on the leader.
            await #expect(throws: AuthError.emailExists) {
                try await follower.store.execute(
                    .createAccount(
                        Self.project, UserID("again")!, AccountCreated(method: .password, createdAt: 0, email: "held@example.com")),
                    metadata: TestStore.user)
            }
            // A write that commits commits the fold with it (a refused one rolls both back), and
            // announces what the fold scheduled.
            follower.store.cleanupChanges.reset()
            try await follower.store.execute(
                .createAccount(Self.project, UserID("fresh")!, AccountCreated(method: .password, createdAt: 0, email: "f@example.com")),
                metadata: TestStore.user)
            #expect(try follower.store.read { try $0.account(held, in: Self.project) }?.email == "held@example.com")
            #expect(follower.store.cleanupChanges.hasEntry(before: .max))
        }
    }

    @Test("a promoted follower records the start of its term only once its fold has reached its head")
    func termStartsAfterTheFold() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([5, 17], on: leader)
        let follower = try Follower(of: leader)
        let starting = try await follower.store.followerFold.paused { () async throws -> Task<StoredEvent?, any Error> in
            try await follower.catchUp(with: leader.store, limit: 5)
            follower.store.writeAuthority.lead(term: 1, until: .now + .seconds(600))
            let starting = Task { try await follower.store.startTerm(1, node: "follower") }
            // The fold held back: the term's start waits for it.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try follower.store.ledgerTerm() == nil)
            return starting
        }
        let started = try #require(try await starting.value)
        #expect(try follower.store.ledgerTerm() == 1 && started.sequence == leader.store.ledgerHead().sequence + 1)
        #expect(try follower.store.followerFold.checkpoint() == follower.store.ledgerHead().sequence)
    }

    @Test("a follower closed right after its last batch has folded it: its projections are at its head")
    func closedFollowerFoldedToItsHead() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([5, 17, 23, 31], on: leader)
        let follower = try Follower(of: leader)
        try await follower.catchUp(with: leader.store, limit: 3)
        follower.store.close()
        let reopened = try DataDirectory(follower.directory.path).openForReading()
        defer { reopened.close() }
        #expect(try reopened.maintenance.digest() == leader.store.maintenance.digest())
    }

    /// The fold's closing passes stop once one folds nothing: a pause (a tail being dropped)
    /// interrupts each before its first chunk, and the close used to wait on them for ever.
    @Test("a follower closed while its fold is held back closes; its next start folds the rest")
    func closedWhileTheFoldIsHeldBack() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([5, 17, 23], on: leader)
        let follower = try Follower(of: leader)
        try await follower.store.followerFold.paused {
            try await follower.catchUp(with: leader.store, limit: 4)
            #expect(try follower.store.followerFold.checkpoint() < follower.store.ledgerHead().sequence)
            follower.store.close()
        }
        let reopened = try DataDirectory(follower.directory.path).open(as: "test")
        defer { reopened.close() }
        #expect(try reopened.maintenance.digest() == leader.store.maintenance.digest())
    }

    @Test("a tail that forgot an account is dropped with the leader's key entries of it: its records open again, as on the leader")
    func tailThatForgets() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([5], on: leader)
        let follower = try Follower(of: leader)
        try await follower.catchUp(with: leader.store, limit: 8)
        let shared = try follower.store.ledgerHead()
        // As a leader, the follower deleted an account both hold, and one of its tail's own.
        follower.store.writeAuthority.lead(term: 1, until: .now + .seconds(600))
        let person = Person(index: 2)
        try await follower.store.execute(.deleteAccount(Self.project, person.uid, by: .user), metadata: person.metadata)
        let ownUID = UserID("tail-only")!
        try await follower.store.execute(
            .createAccount(Self.project, ownUID, AccountCreated(method: .password, createdAt: 0, email: "own@example.com")),
            metadata: TestStore.user)
        try await follower.store.execute(.deleteAccount(Self.project, ownUID, by: .user), metadata: TestStore.user)
        follower.store.writeAuthority.follow("leader")
        try leader.run(ForgettingProperties.command(7, person), as: person.metadata)

        // Without the leader's entries: refused, nothing dropped.
        await #expect(throws: StoreError.self) { try await follower.store.replication.dropTail(after: shared.sequence) }
        #expect(try follower.store.ledgerHead().sequence == shared.sequence + 3)
        // Only the shared account's key is asked for: the other's goes with the tail.
        let forgotten = try follower.store.replication.keysForgotten(after: shared.sequence)
        #expect(forgotten.count == 1)
        let entries = try leader.store.replication.keyEntries(ofStreamsBeginningAt: forgotten)
        let dropped = try await follower.store.replication.dropTail(
            after: shared.sequence, restoring: try ReplicationBatch(received: entries.bytes))
        #expect(dropped.count == 3)
        try await follower.store.replication.folded()
        try await follower.catchUp(with: leader.store, limit: 8)
        try await Self.expectSame(follower.store, leader.store)
        let account = try follower.store.read { try $0.account(person.uid, in: Self.project) }
        let leaders = try leader.store.read { try $0.account(person.uid, in: Self.project) }
        #expect(account != nil && account == leaders)
        // A batch holding a record is no set of key entries.
        let records = try leader.store.replication.batch(after: shared.sequence)
        await #expect(throws: StoreError.self) {
            try await follower.store.replication.dropTail(after: shared.sequence, restoring: try ReplicationBatch(received: records.bytes))
        }
    }

    @Test("a record altered on the way, a frame cut short, or a leader applying: refused, nothing applied")
    func refusals() async throws {
        let leader = try TestStore(label: "leader")
        defer { try? leader.close() }
        try await Self.record([1, 2, 3], on: leader)
        let follower = try Follower(of: leader)
        let batch = try leader.store.replication.batch(after: 0)
        var altered = batch.bytes
        altered[altered.count - 40] ^= 1
        await #expect(throws: StoreError.self) { try await follower.store.replication.apply(try ReplicationBatch(received: altered)) }
        #expect(throws: StoreError.self) { try ReplicationBatch(received: Array(batch.bytes.dropLast(3))) }
        #expect(throws: StoreError.self) { try ReplicationBatch(received: [9, 0, 0, 0, 0]) }
        #expect(try follower.store.ledgerHead().sequence == 0)
        follower.store.writeAuthority.lead(term: 2, until: .now + .seconds(600))
        await #expect(throws: StoreError.self) { try await follower.store.replication.apply(batch) }
        #expect(try follower.store.ledgerHead().sequence == 0)
        follower.store.writeAuthority.follow("leader")
        try await follower.store.replication.apply(batch)
        try await Self.expectSame(follower.store, leader.store)
        // Nothing after the head: an empty batch.
        #expect(try leader.store.replication.batch(after: leader.store.ledgerHead().sequence).records == 0)
        // The ledger key's short name: the same for the copy, another for another data directory.
        let other = try TestStore(label: "other")
        defer { try? other.close() }
        #expect(follower.store.replication.ledgerKeyFingerprint == leader.store.replication.ledgerKeyFingerprint)
        #expect(other.store.replication.ledgerKeyFingerprint != leader.store.replication.ledgerKeyFingerprint)
        #expect(leader.store.replication.ledgerKeyFingerprint?.count == 16)
    }
}
