import HearthDomain
import HearthStore

/// `signInWithCustomToken`: the app's backend vouches for a uid (firebase-auth-emulator-api.md 2.12).
extension AuthService {
    public func signInWithCustomToken(_ token: String?, _ caller: Caller) async throws -> SignInResult {
        let custom = try settings.customTokens.verify(token, now: now)
        let project = caller.project
        let uid = custom.uid
        let refresh = TokenIssuer.newRefreshToken(for: uid, provider: "custom", claims: custom.claims)
        let (account, isNewUser, at) = try await write(caller, uid: uid) { tx in
            // First use creates the account; signIn refuses a disabled one (USER_DISABLED).
            let isNew = try tx.account(uid, in: project) == nil
            if isNew { try tx.execute(.createAccount(project, uid, AccountCreated(method: .custom, createdAt: tx.now))) }
            try tx.execute(.signIn(project, uid, method: "custom", refreshTokenHash: refresh.hash))
            return (try tx.account(uid, project), isNew, tx.now)
        }
        return try signedIn(
            account, provider: "custom", refresh: refresh, isNewUser: isNewUser, at: at, caller, claims: custom.claims)
    }
}
