import HearthDomain
import HearthTesting
import Testing

@testable import HearthStore

/// `audit show --at`, the console's "as of": an account folded from its events recorded by a
/// time, up to the millisecond, whatever other streams recorded in between.
@Suite("store: an account as of a time")
struct AccountAsOfTests {
    static let project = TestStore.project

    @Test func theFoldStopsAtTheLastEventRecordedByThen() throws {
        let test = try TestStore(label: "as-of")
        defer { try? test.close() }
        let start = test.clock.now()
        let alice = UserID("alice")!
        let bob = UserID("bob")!
        func rename(_ uid: UserID, _ name: String) throws {
            try test.run(.update(Self.project, uid, AccountUpdate(profile: ProfileUpdated(displayName: name))))
        }
        try test.run(.createAccount(Self.project, alice, AccountCreated(method: .password, createdAt: start, email: "a@as-of.example")))
        test.clock.advance(milliseconds: 1_000)
        try test.run(.createAccount(Self.project, bob, AccountCreated(method: .anonymous, createdAt: start + 1_000)))
        try rename(alice, "first")
        test.clock.advance(milliseconds: 1_000)
        try rename(bob, "bob")
        try rename(alice, "second")
        test.clock.advance(milliseconds: 1_000)
        try test.run(.update(Self.project, alice, AccountUpdate(disabled: true)), as: TestStore.admin)

        let audit = test.store.audit
        let before = try audit.account(alice, in: Self.project, at: start - 1)
        #expect(before.account == nil && before.through == nil)
        let created = try audit.account(alice, in: Self.project, at: start)
        #expect(created.account?.email == "a@as-of.example" && created.account?.displayName == nil)
        #expect(created.through?.type == .accountCreated)
        // An event recorded exactly then is in; the rename a millisecond later is not.
        let renamed = try audit.account(alice, in: Self.project, at: start + 1_999)
        #expect(renamed.account?.displayName == "first")
        #expect(try audit.account(alice, in: Self.project, at: start + 2_000).account?.displayName == "second")
        #expect(try audit.account(alice, in: Self.project, at: start + 2_999).account?.disabled == false)
        let latest = try audit.account(alice, in: Self.project, at: .max)
        #expect(latest.account?.disabled == true && latest.account?.displayName == "second")
        #expect(try audit.account(bob, in: Self.project, at: start + 1_500).account?.displayName == nil)
    }

    /// Erased is told from every event folded, not from the last: an admin's change from the
    /// command line seals nothing (no client address), so nothing of it reads as erased.
    @Test func anAccountErasedSinceComesWithoutItsPersonalFieldsWhateverItsLastEvent() throws {
        let test = try TestStore(label: "as-of-erased")
        defer { try? test.close() }
        let start = test.clock.now()
        let carol = UserID("carol")!
        let fromTheWeb = Metadata(actor: .endUser, requestId: "web", clientIp: "198.51.100.7")
        let created = AccountCreated(method: .password, createdAt: start, email: "c@as-of.example", displayName: "Carol")
        try test.run(.createAccount(Self.project, carol, created), as: fromTheWeb)
        test.clock.advance(milliseconds: 1_000)
        let disabled = try test.run(.update(Self.project, carol, AccountUpdate(disabled: true)), as: TestStore.admin)
        // No client address and no personal field: the event seals nothing.
        #expect(disabled.first?.metadata.clientIp == nil && disabled.first?.isErased == false)
        test.clock.advance(milliseconds: 1_000)
        let audit = test.store.audit
        let live = try audit.account(carol, in: Self.project, at: start + 1_000)
        #expect(live.account?.email == "c@as-of.example" && !live.isErased)

        try test.run(.deleteAccount(Self.project, carol, by: .user), as: fromTheWeb)
        let erased = try audit.account(carol, in: Self.project, at: start + 1_000)
        #expect(erased.through?.type == .accountDisabled && erased.through?.isErased == false)
        #expect(erased.isErased)
        #expect(erased.account?.disabled == true)
        #expect(erased.account?.email == nil && erased.account?.displayName == nil && erased.account?.password == nil)

        // Created again, the uid starts with a key of its own: nothing of it is erased.
        test.clock.advance(milliseconds: 1_000)
        let again = AccountCreated(method: .password, createdAt: test.clock.now(), email: "c2@as-of.example")
        try test.run(.createAccount(Self.project, carol, again), as: fromTheWeb)
        let recreated = try audit.account(carol, in: Self.project, at: .max)
        #expect(!recreated.isErased && recreated.account?.email == "c2@as-of.example")
    }
}
