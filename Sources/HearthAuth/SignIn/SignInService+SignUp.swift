import HearthDomain
import HearthStore

/// `accounts:signUp`: anonymous, email+password, linking email+password, admin create.
extension SignInService {
    public func signUpAnonymously(_ caller: Caller) async throws -> SignInResult {
        let project = caller.project
        try limits?.admitSignUp(caller, now: now)
        let session = try await write(caller) { tx in
            let uid = tx.newUserID()
            let created = AccountCreated(method: .anonymous, createdAt: tx.now)
            return try context.record(
                .newAccount(project, uid, created, method: .anonymous), in: tx.recording(as: AuthContext.metadata(caller, uid: uid)))
        }
        return try await issueTokens(for: session, caller)
    }

    public func signUpWithPassword(email: String?, password: String?, displayName: String?, _ caller: Caller) async throws
        -> SignInResult
    {
        let email = try Validation.email(email)
        let password = try Validation.password(password)
        try checkPasswordPolicy(password, caller)
        let project = caller.project
        // Every attempt counts, a taken address too: sign-up is no way to test addresses in bulk.
        try limits?.admitSignUp(caller, now: now)
        // Fail fast before spending a hash; the writer checks again.
        if try read({ try $0.owner(ofEmail: email, in: project) }) != nil { throw FirebaseError(AuthError.emailExists) }
        let hash = try await hash(password, for: caller)
        let session = try await write(caller) { tx in
            let uid = tx.newUserID()
            let created = AccountCreated(
                method: .password, createdAt: tx.now, email: email, password: hash, displayName: displayName)
            return try context.record(
                .newAccount(project, uid, created, method: .password), in: tx.recording(as: AuthContext.metadata(caller, uid: uid)))
        }
        return try await issueTokens(for: session, caller)
    }

    /// How the iOS SDK upgrades the signed-in (often anonymous) user: signUp with its idToken.
    /// The email is unverified; earlier sessions end and fresh tokens come back. Replacing an
    /// email the account already had is an email change: the old address gets RECOVER_EMAIL.
    public func linkPassword(
        idToken: String, email: String?, password: String?, displayName: String?, _ caller: Caller, origin: LinkOrigin
    ) async throws -> SignInResult {
        let email = try Validation.email(email)
        let password = try Validation.password(password)
        try checkPasswordPolicy(password, caller)
        let (current, session) = try authenticate(idToken, caller)
        try requireRecentSignIn(current, session)
        let project = caller.project
        let uid = current.uid
        // Email/Password off: no password is linked (`decide` refuses it; this spares the hash).
        guard try read({ try $0.config(of: project) }).emailPasswordEnabled else { throw FirebaseError(AuthError.operationNotAllowed) }
        if let owner = try read({ try $0.owner(ofEmail: email, in: project) }), owner != uid {
            throw FirebaseError(AuthError.emailExists)
        }
        let hash = try await hash(password, for: caller)
        let recovery = current.email != email ? try prepareEmailRecovery(from: current.email, origin: origin) : nil
        let (recorded, replaced) = try await write(caller, uid: uid) { tx in
            let before = try AuthContext.reverifiedAccount(uid, project, sessionIssuedAt: session.issuedAt, in: tx)
            var preparation: [Command] = [.linkPassword(project, uid, hash, email: email)]
            if let displayName {
                preparation.append(.update(project, uid, AccountUpdate(profile: ProfileUpdated(displayName: displayName))))
            }
            let plan = SignInPlan.existingAccount(project, uid, method: .password, after: preparation)
            return (try context.record(plan, in: tx), try recovery?.issue(for: uid, project, replacing: before.email, in: tx))
        }
        if let recovery, let replaced { deliver(recovery, replaced: replaced, by: recorded.account, project) }
        return try await issueTokens(for: recorded, caller)
    }
}
