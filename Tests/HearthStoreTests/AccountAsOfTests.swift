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
}
