import HearthDomain
import HearthStore

/// `accounts:signUp`: anonymous, email+password, linking email+password, admin create.
extension AuthService {
    public func signUpAnonymously(_ caller: Caller) async throws -> SignInResult {
        let project = caller.project
        try limits?.admitSignUp(caller, now: now)
        let session = try await write(caller) { tx in
            let uid = tx.newUserID()
            let created = AccountCreated(method: .anonymous, createdAt: tx.now)
            return try Self.run(
                .newAccount(project, uid, created, method: .anonymous), in: tx.recording(as: Self.metadata(caller, uid: uid)))
        }
        return try await signedIn(session, caller)
    }

    public func signUpWithPassword(email: String?, password: String?, displayName: String?, _ caller: Caller) async throws
        -> SignInResult
    {
        let email = try Validation.email(email)
        let password = try Validation.password(password)
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
            return try Self.run(
                .newAccount(project, uid, created, method: .password), in: tx.recording(as: Self.metadata(caller, uid: uid)))
        }
        return try await signedIn(session, caller)
    }

    /// How the iOS SDK upgrades the signed-in (often anonymous) user: signUp with its idToken.
    /// The email is unverified; earlier sessions end and fresh tokens come back. Replacing an
    /// email the account already had is an email change: the old address gets RECOVER_EMAIL.
    public func linkPassword(
        idToken: String, email: String?, password: String?, displayName: String?, _ caller: Caller, origin: LinkOrigin
    ) async throws -> SignInResult {
        let email = try Validation.email(email)
        let password = try Validation.password(password)
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
        let (signedIn, replaced) = try await write(caller, uid: uid) { tx in
            let before = try Self.stillSignedIn(uid, project, since: session.issuedAt, in: tx)
            var preparation: [Command] = [.linkPassword(project, uid, hash, email: email)]
            if let displayName {
                preparation.append(.update(project, uid, AccountUpdate(profile: ProfileUpdated(displayName: displayName))))
            }
            let plan = SignInPlan.existingAccount(project, uid, method: .password, after: preparation)
            return (try Self.run(plan, in: tx), try recovery?.issue(for: uid, project, replacing: before.email, in: tx))
        }
        if let recovery, let replaced { deliver(recovery, replaced: replaced, by: signedIn.account, project) }
        return try await self.signedIn(signedIn, caller)
    }

    /// What an administrator may set when creating a user (Admin SDK `create_user`).
    public struct NewUser: Sendable {
        public var uid: UserID?
        public var email: String?
        public var password: String?
        public var displayName: String?
        public var photoUrl: String?
        public var phoneNumber: String?
        public var emailVerified = false
        public var disabled = false

        public init() {}
    }

    public func createUser(_ user: NewUser, _ caller: Caller) async throws -> Account {
        let email = try user.email.map { try Validation.email($0) }
        let password = try user.password.map { try Validation.password($0) }
        let phone = try user.phoneNumber.map(Validation.phoneNumber)
        let hash = if let password { try await hash(password, for: caller) } else { PasswordHash?.none }
        let project = caller.project
        return try await write(caller) { tx in
            let uid = user.uid ?? tx.newUserID()
            let created = AccountCreated(
                method: .admin, createdAt: tx.now, email: email, emailVerified: user.emailVerified, password: hash,
                displayName: user.displayName, photoUrl: user.photoUrl, phoneNumber: phone, disabled: user.disabled)
            try tx.execute(.createAccount(project, uid, created))
            return try tx.account(uid, project)
        }
    }
}
