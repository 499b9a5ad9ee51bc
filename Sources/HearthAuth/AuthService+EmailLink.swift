import HearthDomain
import HearthStore

/// Email-link (passwordless) sign-in: seed 000.
extension AuthService {
    /// Completes an email link: signs in (creating the account if needed), links the email to
    /// the `idToken`'s user, or reauthenticates. Proving the email removes an unverified password
    /// and revokes earlier sessions (seed 000 rule 4).
    public func signInWithEmailLink(email: String?, oobCode: String?, idToken: String?, _ caller: Caller) async throws
        -> SignInResult
    {
        let linking = try idToken.map { try authenticate($0, caller) }
        guard let email, !email.isEmpty else { throw FirebaseError.missingEmail }
        guard let oobCode, !oobCode.isEmpty else { throw FirebaseError.missingOobCode }
        let address = normalizeEmail(email)
        let project = caller.project
        let hash = Self.codeHash(oobCode)
        let code = try read { try $0.oobCode(hash, in: project) }
        guard let code, !code.consumed, code.requestType == .emailSignIn else { throw FirebaseError.invalidOobCode }
        guard code.email == address else {
            throw FirebaseError.bad("INVALID_EMAIL : The email provided does not match the sign-in email address.")
        }
        // Which account signs in is settled inside the write, so its token is minted there.
        let (account, refresh, isNew, at) = try await write(caller, uid: linking?.0.uid) { tx in
            try tx.execute(.consumeOOBCode(project, codeHash: hash))
            let owner = try tx.owner(ofEmail: address, in: project)
            let newUid = tx.newUserID()
            var uid = newUid
            if let (current, session) = linking {
                _ = try Self.stillSignedIn(current.uid, project, since: session.issuedAt, in: tx)
                if let owner, owner != current.uid { throw FirebaseError(AuthError.emailExists) }
                uid = current.uid
            } else if let owner {
                uid = owner
            } else {
                let created = AccountCreated(method: .emailLink, createdAt: tx.now, email: address, emailVerified: true)
                try tx.execute(.createAccount(project, uid, created))
            }
            let refresh = TokenIssuer.newRefreshToken(for: uid, provider: "password")
            try tx.execute(.completeEmailLinkSignIn(project, uid, email: address, refreshTokenHash: refresh.hash))
            return (try tx.account(uid, project), refresh, uid == newUid, tx.now)
        }
        return try signedIn(account, provider: "password", refresh: refresh, isNewUser: isNew, at: at, caller)
    }
}
