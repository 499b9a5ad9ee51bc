import HearthDomain
import HearthStore

/// `accounts:signInWithIdp` (verifyAssertion): sign in, link or reauthenticate with a provider.
extension AuthService {
    public enum FederatedOutcome: Sendable {
        case signedIn(SignInResult)
        /// One account per email: the provider's unverified email belongs to another account,
        /// which must sign in first and link (seed 002 rule 6).
        case needConfirmation(email: String, existingUid: UserID, providers: [String])
    }

    public func signInWithIdentity(_ identity: FederatedIdentity, idToken: String?, _ caller: Caller) async throws
        -> FederatedOutcome
    {
        let link = ProviderLink(
            providerId: identity.providerId, federatedId: identity.subject, email: identity.email,
            displayName: identity.displayName, photoUrl: identity.photoUrl, screenName: identity.screenName)
        let provider = identity.providerId
        let project = caller.project
        if let idToken {
            let (current, session) = try authenticate(idToken, caller)
            let uid = current.uid
            let refresh = TokenIssuer.newRefreshToken(for: uid, provider: provider)
            let (account, at) = try await write(caller, uid: uid) { tx in
                _ = try Self.stillSignedIn(uid, project, since: session.issuedAt, in: tx)
                if let email = identity.email, try tx.config(of: project).oneAccountPerEmail,
                    let owner = try tx.owner(ofEmail: email, in: project), owner != uid
                {
                    throw FirebaseError(AuthError.emailExists)
                }
                try tx.execute(.linkProvider(project, uid, link))
                try tx.execute(.signIn(project, uid, method: provider, refreshTokenHash: refresh.hash))
                return (try tx.account(uid, project), tx.now)
            }
            return .signedIn(try signedIn(account, provider: provider, refresh: refresh, isNewUser: false, at: at, caller))
        }
        // Which account signs in is settled inside the write, so its token is minted there.
        let outcome: Result<(Account, RefreshToken, Bool, Int64), NeedConfirmation> = try await write(caller) { tx in
            func signIn(_ uid: UserID, isNew: Bool) throws -> Result<(Account, RefreshToken, Bool, Int64), NeedConfirmation> {
                let refresh = TokenIssuer.newRefreshToken(for: uid, provider: provider)
                try tx.execute(.signIn(project, uid, method: provider, refreshTokenHash: refresh.hash))
                return .success((try tx.account(uid, project), refresh, isNew, tx.now))
            }
            if let owner = try tx.owner(ofProvider: provider, federatedId: identity.subject, in: project) {
                return try signIn(owner, isNew: false)
            }
            if let email = identity.email, try tx.config(of: project).oneAccountPerEmail,
                let owner = try tx.owner(ofEmail: email, in: project)
            {
                let existing = try tx.account(owner, project)
                guard identity.emailVerified else {
                    return .failure(NeedConfirmation(email: email, uid: owner, providers: existing.providers.map(\.providerId)))
                }
                // The provider vouches for the email: it joins the account that has it.
                try tx.execute(.linkProvider(project, owner, link))
                if !existing.emailVerified { try tx.execute(.confirmEmailByProvider(project, owner, email: email)) }
                return try signIn(owner, isNew: false)
            }
            let created = AccountCreated(
                method: .federated, createdAt: tx.now, email: identity.email, emailVerified: identity.emailVerified,
                displayName: identity.displayName, photoUrl: identity.photoUrl, providers: [link])
            let newUid = tx.newUserID()
            try tx.execute(.createAccount(project, newUid, created))
            return try signIn(newUid, isNew: true)
        }
        switch outcome {
        case .success(let (account, refresh, isNew, at)):
            return .signedIn(try signedIn(account, provider: provider, refresh: refresh, isNewUser: isNew, at: at, caller))
        case .failure(let pending):
            return .needConfirmation(email: pending.email, existingUid: pending.uid, providers: pending.providers)
        }
    }

    struct NeedConfirmation: Error, Sendable {
        var email: String
        var uid: UserID
        var providers: [String]
    }
}

extension AuthService {
    /// Accounts linked to `providerId` (the development fake IdP page lists them to reuse).
    public func accounts(linkedTo providerId: String, _ caller: Caller, limit: Int = 100) throws -> [Account] {
        try read { try $0.accounts(linkedTo: providerId, in: caller.project, limit: limit) }
    }
}
