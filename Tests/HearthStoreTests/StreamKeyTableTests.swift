import HearthDomain
import HearthLedger
import HearthTesting
import LMDB
import Testing

@testable import HearthStore

/// The key table's layout: keys appended by their stream's first sequence, and the layout keyed
/// by stream name that Hearth wrote before, which readers still read and writers move.
@Suite("store: the stream key table")
struct StreamKeyTableTests {
    static let project = TestStore.project
    static let visitor = Metadata(actor: .endUser, requestId: "r", clientIp: "198.51.100.77")

    /// A live account with a code sealed under its key, a deleted one, and a uid deleted and
    /// created again (its first generation destroyed, its second live).
    static func history(_ test: TestStore) throws {
        for uid in ["kept", "gone", "again"] {
            try test.run(
                .createAccount(
                    project, UserID(uid)!,
                    AccountCreated(method: .password, createdAt: 1, email: "\(uid)@keys.example", displayName: "Name \(uid)")),
                as: visitor)
        }
        try test.run(
            .issueOOBCode(
                project, codeHash: "c0de",
                OOBCodeIssued(requestType: .passwordReset, email: "kept@keys.example", uid: UserID("kept")!, expiresAt: .max)),
            as: visitor)
        try test.run(.deleteAccount(project, UserID("gone")!, by: .user), as: visitor)
        try test.run(.deleteAccount(project, UserID("again")!, by: .admin), as: TestStore.admin)
        try test.run(
            .createAccount(project, UserID("again")!, AccountCreated(method: .admin, createdAt: 2, email: "again2@keys.example")),
            as: TestStore.admin)
    }

    /// Every event as the audit reads it, and every key's state.
    static func reading(_ store: AccountStore) throws -> (events: [StoredEvent], keys: [StreamKeys.State], counts: StreamKeys.Counts) {
        var events: [StoredEvent] = []
        try store.audit.replay(StoreAudit.Filter(project: project)) { events.append($0) }
        let keys = try store.environment.read { txn in
            try ["kept", "gone", "again"].map { try store.ledger.keys.state(of: .account(project, UserID($0)!), in: txn) }
        }
        let counts = try store.environment.read { try store.ledger.keys.counts(in: $0) }
        return (events, keys, counts)
    }

    @Test func newKeysAreAppendedOnePerStreamAndGeneration() throws {
        let test = try TestStore(label: "keys-append")
        defer { try? test.close() }
        try Self.history(test)
        let (events, keys, counts) = try Self.reading(test.store)
        #expect(keys == [.live(generation: 1), .destroyed(generation: 1), .live(generation: 2)])
        #expect(counts.live == 2 && counts.destroyed == 2)
        #expect(events.filter(\.isErased).count == 2)  // gone's and again's first creations
        #expect(events.contains { $0.payload.type == .oobCodeIssued && !$0.isErased })
        // Keys in the order their streams began: the table is appended to.
        let firsts = try test.store.environment.read { txn in
            var firsts: [UInt64] = []
            try txn.forEach(test.store.ledger.keys.table) { key, _ in
                firsts.append(try BigEndianUInt64(decoding: UnsafeRawBufferPointer(rebasing: key[0..<8])).value)
                return .continue
            }
            return firsts
        }
        #expect(firsts == firsts.sorted() && firsts.count == 4)
    }

    /// A rebuild reads a run of one stream's records without asking for its key again (the run
    /// keeps it), but a uid deleted and created again in the same run seals under a new
    /// generation: what the first sealed reads as erased, what the second sealed reads back.
    @Test func aRebuildReadsARunWhoseKeyChangesGeneration() throws {
        let test = try TestStore(label: "keys-run")
        defer { try? test.close() }
        let uid = UserID("again")!
        try test.run(
            .createAccount(Self.project, uid, AccountCreated(method: .password, createdAt: 1, email: "first@keys.example")),
            as: Self.visitor)
        try test.run(.update(Self.project, uid, AccountUpdate(profile: ProfileUpdated(displayName: "First"))), as: Self.visitor)
        try test.run(.deleteAccount(Self.project, uid, by: .user), as: Self.visitor)
        try test.run(
            .createAccount(Self.project, uid, AccountCreated(method: .password, createdAt: 2, email: "second@keys.example")),
            as: Self.visitor)
        try test.run(.update(Self.project, uid, AccountUpdate(profile: ProfileUpdated(displayName: "Second"))), as: Self.visitor)
        let live = try test.store.maintenance.digest()
        try test.store.maintenance.rebuild()
        #expect(try test.store.maintenance.digest() == live)
        let account = try #require(try test.account("again"))
        #expect(account.email == "second@keys.example" && account.displayName == "Second")
        let erased = try test.store.audit.events(of: .account(Self.project, uid)).map(\.isErased)
        #expect(erased == [true, true, false, false, false])
    }

    @Test func aWrappedKeyMovedToAnotherEntryDoesNotOpen() throws {
        let test = try TestStore(label: "keys-swapped")
        defer { try? test.close() }
        try Self.history(test)
        let store = test.store
        let entries = try store.environment.read { txn in
            var live: [([UInt8], [UInt8])] = []
            try txn.forEach(store.ledger.keys.table) { key, value in
                if !value.isEmpty { live.append((Array(key), Array(value))) }
                return .continue
            }
            return live
        }
        #expect(entries.count == 2)
        try store.environment.writer.perform { txn in
            try txn.put(store.ledger.keys.table, entries[0].0, entries[1].1)
            try txn.put(store.ledger.keys.table, entries[1].0, entries[0].1)
        }
        #expect(throws: LedgerKeyError.self) { try store.environment.read { try store.ledger.keys.openAll(in: $0) } }
        #expect(throws: (any Error).self) { try store.audit.events(of: .account(Self.project, UserID("kept")!)) }
    }

    @Test func aTableKeyedByNameStillReadsAndAWriterMovesIt() throws {
        let test = try TestStore(label: "keys-legacy")
        try Self.history(test)
        let before = try Self.reading(test.store)
        let digest = try test.store.maintenance.digest()
        let moved = try test.store.environment.writer.perform { try test.store.ledger.keys.moveToNameKeyedLayout(in: $0) }
        #expect(moved == 3)
        try test.close()

        // A read-only tool on a directory no new writer has opened reads the old layout.
        let reader = try test.dataDirectory.openForReading()
        let legacy = try Self.reading(reader)
        #expect(legacy.events == before.events && legacy.keys == before.keys)
        #expect(legacy.counts.live == 2 && legacy.counts.destroyed == 1)  // only the latest generation was kept
        reader.close()

        // A writer moves the entries before anything else, and everything reads the same.
        let writer = try test.dataDirectory.open(as: "test")
        defer { writer.close() }
        let after = try Self.reading(writer)
        #expect(after.events == before.events && after.keys == before.keys)
        #expect(after.counts.live == 2 && after.counts.destroyed == 1)
        #expect(try writer.environment.read { try writer.ledger.keys.openAll(in: $0) } == 2)
        #expect(try writer.maintenance.moveLegacyStreamKeys() == 0)
        try writer.maintenance.rebuild()
        #expect(try writer.maintenance.digest() == digest)
        // The moved keys go on sealing, and are destroyed as before.
        try writer.executeAndWait(.deleteAccount(Self.project, UserID("kept")!, by: .user), metadata: Self.visitor)
        let forgotten = try writer.audit.events(of: .oobCode(Self.project, "c0de"))
        #expect(forgotten.allSatisfy { $0.isErased })
    }
}
