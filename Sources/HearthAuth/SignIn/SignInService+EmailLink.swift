import HearthDomain
import HearthStore

/// Email-link (passwordless) sign-in: the user signs in by opening a link mailed to the address.
extension SignInService {
    /// Completes an email link: signs in (creating the account if needed), links the email to
    /// the `idToken`'s user, or reauthenticates. Proving the email removes an unverified password
    /// and revokes earlier sessions (as production Firebase does; its Auth Emulator does not).
    public func signInWithEmailLink(email: String?, oobCode: String?, idToken: String?, _ caller: Caller) async throws
        -> SignInResult
    {
        let linking = try idToken.map { try authenticate($0, caller) }
        if let (account, session) = linking { try requireRecentSignIn(account, session) }
        guard let email, !email.isEmpty else { throw FirebaseError.missingEmail }
        guard let oobCode, !oobCode.isEmpty else { throw FirebaseError.missingOobCode }
        let address = normalizeEmail(email)
        let project = caller.project
        let hash = AuthContext.codeHash(oobCode)
        let code = try read { try $0.oobCode(hash, in: project) }
        guard let code, !code.consumed, code.requestType == .emailSignIn else { throw FirebaseError.invalidOobCode }
        // A swept code forgot its address: consuming it answers EXPIRED_OOB_CODE.
        guard code.email == address || code.isForgotten else {
            throw FirebaseError.bad("INVALID_EMAIL : The email provided does not match the sign-in email address.")
        }
        // Which account signs in is settled inside the write (the domain's plan), so its token
        // is minted there.
        let session = try await write(caller, uid: linking?.0.uid) { tx in
            try tx.execute(.consumeOOBCode(project, codeHash: hash))
            if let (current, session) = linking {
                _ = try AuthContext.reverifiedAccount(current.uid, project, sessionIssuedAt: session.issuedAt, in: tx)
            }
            let plan = try Decide.planEmailLinkSignIn(
                project, email: address, linkingTo: linking?.0.uid, newUid: tx.newUserID(), now: tx.now, state: tx)
            return try context.record(plan, in: tx)
        }
        return try await issueTokens(for: session, caller)
    }
}
