import HearthDomain
import HearthStore

/// `accounts:update`, `accounts:delete` and the admin reads.
extension AccountService {
    /// Whose account a request acts on: the bearer of an ID token, or (admin) a uid.
    public enum Target: Sendable {
        case idToken(String?)
        case uid(UserID)
    }

    /// The fields of an `accounts:update`; `nil` leaves a field alone.
    public struct Changes: Sendable {
        public var email: String?
        public var password: String?
        public var displayName: String?
        public var photoUrl: String?
        public var phoneNumber: String?
        /// DISPLAY_NAME, PHOTO_URL, PASSWORD, EMAIL (others are refused).
        public var deleteAttributes: [String] = []
        public var deleteProviders: [String] = []
        public var disabled: Bool?
        public var emailVerified: Bool?
        /// Custom claims JSON text; "{}" or "" clears them.
        public var customAttributes: String?
        /// Unix seconds. An administrator's value is kept; a user's only means "now".
        public var validSince: Int64?
        /// `linkProviderUserInfo`: a provider identity to link (after any unlinking).
        public var linkProvider: ProviderLink?
        /// An administrator's `mfa.enrollments`: the enrollment ids of the factors the account
        /// keeps; the others are withdrawn (and the account's sessions end with them).
        public var keptSecondFactors: [String]?

        public init() {}
    }

    public struct UpdateResult: Sendable {
        public var account: Account
        /// Present when the change revoked earlier sessions of a signed-in caller.
        public var tokens: IssuedTokens?
    }

    /// The account a request acts on, and for an ID token, the session that proved it.
    func resolve(_ target: Target, _ caller: Caller) throws -> (Account, session: TokenIssuer.VerifiedIDToken?) {
        switch target {
        case .idToken(let token):
            let (account, verified) = try authenticate(token, caller)
            return (account, verified)
        case .uid(let uid):
            guard let account = try read({ try $0.account(uid, in: caller.project) }) else { throw FirebaseError.userNotFound }
            return (account, nil)
        }
    }

    /// Applies `changes`. When an email replaces another, the old address gets a RECOVER_EMAIL
    /// link (built from `origin`) that moves the account back, as Firebase sends.
    public func update(_ target: Target, _ changes: Changes, _ caller: Caller, origin: LinkOrigin) async throws
        -> UpdateResult
    {
        let (current, session) = try resolve(target, caller)
        if case .idToken = target, changes.disabled != nil { throw FirebaseError(AuthError.operationNotAllowed) }
        if let session {
            let removes = changes.deleteAttributes.contains { $0 == "EMAIL" || $0 == "PASSWORD" }
            if changes.email != nil || changes.password != nil || removes { try requireRecentSignIn(current, session) }
            // Email enumeration protection: an app changes an email only by verifying the new one
            // first (verify-before-update); a direct change would say whether the address is taken.
            if changes.email != nil, try read({ try $0.config(of: caller.project) }).improvedEmailPrivacy {
                throw FirebaseError.bad("OPERATION_NOT_ALLOWED : Please verify the new email before changing email.")
            }
        }
        var update = AccountUpdate()
        update.email = try changes.email.map { try Validation.email($0) }
        let password = try changes.password.map { try Validation.password($0) }
        // The policy holds the passwords users choose; an administrator may set any.
        if let password, session != nil { try checkPasswordPolicy(password, caller) }
        update.emailVerified = changes.emailVerified
        update.disabled = changes.disabled
        update.customClaims = try changes.customAttributes.map { $0.isEmpty ? nil : try Validation.customClaims($0) }
        var profile = ProfileUpdated(displayName: changes.displayName, photoUrl: changes.photoUrl)
        if let phone = changes.phoneNumber { profile.phoneNumber = try Validation.phoneNumber(phone) }
        for attribute in changes.deleteAttributes {
            switch attribute {
            case "DISPLAY_NAME": profile.deleted.append(.displayName)
            case "PHOTO_URL": profile.deleted.append(.photoUrl)
            case "PASSWORD": update.removePassword = true
            case "EMAIL": update.removeEmail = true
            case "USER_ATTRIBUTE_NAME_UNSPECIFIED": break
            default: throw FirebaseError.invalidArgument("deleteAttribute: unsupported value \(attribute)")
            }
        }
        update.profile = profile
        update.unlinkProviders += changes.deleteProviders.map(ProviderID.init(rawValue:))
        update.byAccountHolder = session != nil
        // Email/Password off: a user's new password is refused (by `decide`), before its hash is spent.
        if password != nil, session != nil, try !read({ try $0.config(of: caller.project) }).emailPasswordEnabled {
            throw FirebaseError(AuthError.operationNotAllowed)
        }
        if let validSince = changes.validSince, caller.isAdmin {
            // An administrator's time is kept, within the range `decide` allows.
            update.revokeSessions = .since(seconds: validSince)
        } else if changes.validSince != nil {
            // A user's validSince only means "end my other sessions now".
            update.revokeSessions = .now
        }
        let withdrawn = try changes.keptSecondFactors.map { kept in
            guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
            guard let added = kept.first(where: { current.secondFactor($0) == nil }) else {
                return current.secondFactors.map(\.enrollmentId).filter { !kept.contains($0) }
            }
            throw FirebaseError.bad(
                "MFA_ENROLLMENT_NOT_FOUND : \(added): an administrator keeps or removes an account's factors; users enrol them.")
        }
        return try await apply(
            update, password: password, link: changes.linkProvider, withdrawing: withdrawn ?? [], to: current, session, caller,
            origin: origin)
    }

    /// Hashes the new password, then records the update. Whether it ends sessions is the
    /// domain's rule; when it ends the signed-in caller's own, the caller gets fresh tokens.
    private func apply(
        _ prepared: AccountUpdate, password: String?, link: ProviderLink?, withdrawing factors: [String], to current: Account,
        _ session: TokenIssuer.VerifiedIDToken?, _ caller: Caller, origin: LinkOrigin
    ) async throws -> UpdateResult {
        var update = prepared
        if let password { update.password = try await hash(password, for: caller) }
        let method: SignInMethod? = password != nil ? .password : session?.method
        let project = caller.project
        let uid = current.uid
        let finalUpdate = update
        let emailChanged = update.email.map { $0 != current.email } ?? false
        // The old address must hear of the change: without room for that email, no change.
        let recovery = emailChanged ? try prepareEmailRecovery(from: current.email, origin: origin) : nil
        let issuedAt = session?.issuedAt
        let (account, replaced, session) = try await write(caller, uid: uid) { tx in
            let stored =
                try issuedAt.map { try AuthContext.reverifiedAccount(uid, project, sessionIssuedAt: $0, in: tx) }
                ?? tx.account(uid, project)
            let before = stored.email
            var events = try tx.execute(.update(project, uid, finalUpdate))
            if let link { events += try tx.execute(.linkProvider(project, uid, link)) }
            for factor in factors { events += try tx.execute(.withdrawSecondFactor(project, uid, enrollmentId: factor, by: .admin)) }
            let revoked = events.contains { if case .sessionsRevoked = $0.payload { true } else { false } }
            // The signed-in caller ended its own session too: it continues in a new one.
            var session: AuthContext.RecordedSignIn?
            if revoked, issuedAt != nil, let method {
                session = try context.record(.continuedSession(project, uid, method: method), in: tx)
            }
            let replaced = try recovery?.issue(for: uid, project, replacing: before, in: tx)
            return (try tx.account(uid, project), replaced, session)
        }
        if let recovery, let replaced { deliver(recovery, replaced: replaced, by: account, project) }
        guard let session else { return UpdateResult(account: account, tokens: nil) }
        return UpdateResult(account: account, tokens: try await issueTokens(for: session, caller).tokens)
    }

    public func delete(_ target: Target, _ caller: Caller) async throws {
        let (account, session) = try resolve(target, caller)
        if let session { try requireRecentSignIn(account, session) }
        let project = caller.project
        let actor: AccountDeleted.Actor = caller.isAdmin ? .admin : .user
        try await write(caller, uid: account.uid) { tx in
            if let session { _ = try AuthContext.reverifiedAccount(account.uid, project, sessionIssuedAt: session.issuedAt, in: tx) }
            try tx.execute(.deleteAccount(project, account.uid, by: actor))
        }
    }

    /// Erasure on request (Hearth's own, for the GDPR's right to erasure): the account's
    /// personal data is forgotten, its key destroyed in the same write as the event that
    /// records the admin and the reason, and the account ends as a deletion ends it.
    @discardableResult
    public func erase(_ uid: UserID, reason: String, _ caller: Caller) async throws -> Erasure {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        let project = caller.project
        try await write(caller) { tx in try tx.execute(.eraseAccount(project, uid, reason: reason)) }
        return Erasure(plainTextHistoryRemains: try store.holdsUnsealedRecords())
    }

    public struct Erasure: Sendable {
        /// The ledger still holds events from before personal data was sealed, which keep it in
        /// plain text until `hearth ledger seal` rewrites them: no erasure reaches those.
        public var plainTextHistoryRemains: Bool
    }

    /// Admin `delete_users`: deletes each uid in one write, missing ones counting as deleted;
    /// without `force` an account that is not disabled stays, and is returned.
    @discardableResult
    public func deleteAccounts(_ uids: [UserID], force: Bool, _ caller: Caller) async throws -> Set<UserID> {
        let project = caller.project
        return try await write(caller) { tx in
            var kept: Set<UserID> = []
            for uid in uids {
                do {
                    try tx.execute(.batchDeleteAccount(project, uid, force: force))
                } catch AuthError.notDisabled {
                    // `decide` refused before anything was appended: the others go on.
                    kept.insert(uid)
                }
            }
            return kept
        }
    }

    /// Deletes every account of the project (the emulator's wipe), a page per transaction.
    public func deleteAllAccounts(_ caller: Caller) async throws -> Int {
        var deleted = 0
        while true {
            let page = try read { try $0.accounts(in: caller.project, limit: 500) }.map(\.uid)
            if page.isEmpty { return deleted }
            try await deleteAccounts(page, force: true, caller)
            deleted += page.count
        }
    }

    public func account(_ uid: UserID, _ caller: Caller) throws -> Account? {
        try read { try $0.account(uid, in: caller.project) }
    }

    /// Admin lookup by any mix of identifiers; each account once, in request order.
    public func lookup(
        uids: [UserID], emails: [String], phoneNumbers: [String], federated: [(providerId: ProviderID, rawId: String)],
        _ caller: Caller
    ) throws -> [Account] {
        let project = caller.project
        return try read { reader in
            var found: [UserID] = uids
            for email in emails { if let uid = try reader.owner(ofEmail: normalizeEmail(email), in: project) { found.append(uid) } }
            for phone in phoneNumbers { if let uid = try reader.owner(ofPhone: phone, in: project) { found.append(uid) } }
            for identity in federated {
                if let uid = try reader.owner(ofProvider: identity.providerId, federatedId: identity.rawId, in: project) {
                    found.append(uid)
                }
            }
            var seen = Set<UserID>()
            return try found.filter { seen.insert($0).inserted }.compactMap { try reader.account($0, in: project) }
        }
    }

    /// The account an ID token speaks for (a user's own `accounts:lookup`).
    public func account(bearing idToken: String?, _ caller: Caller) throws -> Account {
        try authenticate(idToken, caller).0
    }

    public func accountCount(_ caller: Caller) throws -> Int {
        try read { try $0.accountCount(in: caller.project) }
    }

    public func listAccounts(after uid: UserID?, skipping: Int = 0, limit: Int, _ caller: Caller) throws -> [Account] {
        try read { try $0.accounts(in: caller.project, after: uid, skipping: skipping, limit: limit) }
    }

    /// Accounts, the most recent first by `order`, after the `(time, uid)` of the page before.
    public func listAccounts(
        newestBy order: AccountListOrder, after position: (time: Int64, uid: UserID)?, limit: Int, _ caller: Caller
    ) throws -> [Account] {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return try read { try $0.accounts(in: caller.project, newestBy: order, after: position, limit: limit) }
    }

    /// Accounts whose email starts with `prefix`, in email order, after the email `after`.
    public func listAccounts(emailPrefix prefix: String, after: String?, limit: Int, _ caller: Caller) throws -> [Account] {
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return try read { try $0.accounts(in: caller.project, emailPrefix: prefix, after: after, limit: limit) }
    }
}
