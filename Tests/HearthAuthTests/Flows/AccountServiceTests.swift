import HearthAuth
import HearthDomain
import HearthTesting
import Testing

@Suite("flows: account administration, without HTTP")
struct AccountServiceTests {
    @Test("an admin creates, finds, updates and deletes a user")
    func lifecycle() async throws {
        let flow = try FlowFixture("accounts-lifecycle")
        defer { try? flow.close() }
        let accounts = flow.services.accounts
        var new = AccountService.NewUser()
        new.email = "Lin@Example.com"
        new.password = "a long password"
        new.displayName = "Lin"
        let created = try await accounts.createUser(new, flow.admin)
        #expect(
            try accounts.lookup(uids: [], emails: ["lin@example.com"], phoneNumbers: [], federated: [], flow.admin).map(\.uid) == [
                created.uid
            ])
        var changes = AccountService.Changes()
        changes.displayName = "Lin Y."
        changes.disabled = true
        let updated = try await accounts.update(.uid(created.uid), changes, flow.admin, origin: flow.origin)
        #expect(updated.account.displayName == "Lin Y." && updated.account.disabled && updated.tokens == nil)
        #expect(try accounts.accountCount(flow.admin) == 1)
        try await accounts.delete(.uid(created.uid), flow.admin)
        #expect(try accounts.account(created.uid, flow.admin) == nil)
        #expect(try accounts.accountCount(flow.admin) == 0)
    }

    @Test("batch delete without force keeps the accounts that are not disabled, in the same write as the others go")
    func batchDeleteKeepsEnabled() async throws {
        let flow = try FlowFixture("accounts-batch")
        defer { try? flow.close() }
        let accounts = flow.services.accounts
        var enabled = AccountService.NewUser()
        enabled.email = "kept@example.com"
        var disabled = AccountService.NewUser()
        disabled.email = "gone@example.com"
        disabled.disabled = true
        let keep = try await accounts.createUser(enabled, flow.admin)
        let gone = try await accounts.createUser(disabled, flow.admin)
        let missing = UserID("neverexisted")!
        let kept = try await accounts.deleteAccounts([keep.uid, gone.uid, missing], force: false, flow.admin)
        #expect(kept == [keep.uid])
        #expect(try accounts.account(gone.uid, flow.admin) == nil && accounts.account(keep.uid, flow.admin) != nil)
        #expect(try await accounts.deleteAccounts([keep.uid], force: true, flow.admin).isEmpty)
        #expect(try accounts.accountCount(flow.admin) == 0)
    }

    @Test("a user's own email change sends a recovery link to the address it replaced")
    func emailChangeSendsRecovery() async throws {
        let flow = try FlowFixture("accounts-email")
        defer { try? flow.close() }
        let session = try await flow.services.signIn.signUpWithPassword(
            email: "old@example.com", password: "a long password", displayName: nil, flow.user)
        var changes = AccountService.Changes()
        changes.email = "new@example.com"
        let updated = try await flow.services.accounts.update(
            .idToken(session.tokens.idToken), changes, flow.user, origin: flow.origin)
        #expect(updated.account.email == "new@example.com" && updated.tokens != nil)
        let recovery = try #require(try flow.lastLink(to: "old@example.com", .recoverEmail))
        #expect(recovery.newEmail == "new@example.com" && recovery.oobLink.contains("mode=recoverEmail"))
    }
}
