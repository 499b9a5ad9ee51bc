import HearthDomain
import HearthStore

/// `accounts:signInWithIdp` (verifyAssertion): sign in, link or reauthenticate with a provider.
extension SignInService {
    public enum FederatedOutcome: Sendable {
        case signedIn(SignInResult)
        /// One account per email: the provider's unverified email belongs to another account,
        /// which must sign in first and link (Firebase's `needConfirmation`, on iOS
        /// `accountExistsWithDifferentCredential`).
        case needConfirmation(email: String, existingUid: UserID, providers: [ProviderID])
    }

    /// `createsAccount` false: a reauthentication (`autoCreate: false`), which never creates one.
    public func signInWithIdentity(
        _ identity: FederatedIdentity, idToken: String?, createsAccount: Bool = true, _ caller: Caller
    ) async throws -> FederatedOutcome {
        let identity = try identity.checkedSizes()
        let link = ProviderLink(
            providerId: identity.providerId, federatedId: identity.subject, email: identity.email,
            displayName: identity.displayName, photoUrl: identity.photoUrl, screenName: identity.screenName)
        let project = caller.project
        let linking = try idToken.map { try authenticate($0, caller) }
        if let (account, session) = linking { try requireRecentSignIn(account, session) }
        let trust = settings.emailTrust
        // Which account signs in is settled inside the write (the domain's plan), so its token
        // is minted there.
        let outcome = try await write(caller, uid: linking?.0.uid) { tx -> Result<AuthContext.RecordedSignIn, NeedConfirmation> in
            if let (current, session) = linking {
                _ = try AuthContext.reverifiedAccount(current.uid, project, sessionIssuedAt: session.issuedAt, in: tx)
            }
            let decided = try Decide.planFederatedSignIn(
                project, identity: link, emailVerified: identity.emailVerified, trust: trust,
                linkingTo: linking?.0.uid, createsAccount: createsAccount,
                newUid: tx.newUserID(), now: tx.now, state: tx)
            switch decided {
            case .signIn(let plan):
                return .success(try context.record(plan, in: tx))
            case .needConfirmation(let email, let owner, let providers):
                return .failure(NeedConfirmation(email: email, uid: owner, providers: providers))
            }
        }
        switch outcome {
        case .success(let done):
            return .signedIn(try await issueTokens(for: done, caller))
        case .failure(let pending):
            return .needConfirmation(email: pending.email, existingUid: pending.uid, providers: pending.providers)
        }
    }

    struct NeedConfirmation: Error, Sendable {
        var email: String
        var uid: UserID
        var providers: [ProviderID]
    }
}
