import HearthDomain
import HearthStore

/// `signInWithCustomToken`: the app's backend vouches for a uid (firebase-auth-emulator-api.md 2.12).
extension SignInService {
    public func signInWithCustomToken(_ token: String?, _ caller: Caller) async throws -> SignInResult {
        let custom = try settings.customTokens.verify(token, now: now)
        let project = caller.project
        let uid = custom.uid
        let session = try await write(caller, uid: uid) { tx in
            // First use creates the account; signIn refuses a disabled one (USER_DISABLED).
            let plan: SignInPlan =
                try tx.account(uid, in: project) == nil
                ? .newAccount(project, uid, AccountCreated(method: .custom, createdAt: tx.now), method: .custom)
                : .existingAccount(project, uid, method: .custom)
            return try context.record(plan, in: tx, claims: custom.claims)
        }
        return try await issueTokens(for: session, caller)
    }
}
