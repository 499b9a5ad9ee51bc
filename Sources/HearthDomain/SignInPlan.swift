/// Which account a sign-in completes on, decided from the state inside the write: the commands
/// that prepare that account (create it, link the provider, confirm its email), then the one that
/// starts the session. Auth mints the refresh token for `uid` and runs `commands`.
public struct SignInPlan: Equatable, Sendable {
    public enum Completion: Equatable, Sendable {
        case signIn(SignInMethod)
        /// The caller's session, ended by its own change, goes on (`Command.continueSession`).
        case continueSession(SignInMethod)
        /// Email-link sign-in's rule: proving the email verifies it, and may remove a password.
        case emailLink(email: String)
    }

    public var project: ProjectID
    public var uid: UserID
    public var isNewUser: Bool
    public var preparation: [Command]
    public var completion: Completion

    public var method: SignInMethod {
        switch completion {
        case .signIn(let method), .continueSession(let method): method
        case .emailLink: .emailLink
        }
    }

    /// A new account's first sign-in.
    public static func newAccount(_ project: ProjectID, _ uid: UserID, _ created: AccountCreated, method: SignInMethod)
        -> SignInPlan
    {
        SignInPlan(
            project: project, uid: uid, isNewUser: true, preparation: [.createAccount(project, uid, created)],
            completion: .signIn(method))
    }

    /// A sign-in to an existing account, after `preparation`.
    public static func existingAccount(
        _ project: ProjectID, _ uid: UserID, method: SignInMethod, after preparation: [Command] = []
    ) -> SignInPlan {
        SignInPlan(project: project, uid: uid, isNewUser: false, preparation: preparation, completion: .signIn(method))
    }

    /// The caller's session after a change that ended every session, its own included.
    public static func continuedSession(_ project: ProjectID, _ uid: UserID, method: SignInMethod) -> SignInPlan {
        SignInPlan(project: project, uid: uid, isNewUser: false, preparation: [], completion: .continueSession(method))
    }

    /// Whether the sign-in stops at a second factor: an account that has one signs in only once
    /// a code proves it (`SecondFactorRules.requiresSecondFactor`); a session that goes on after
    /// its own change proved itself already.
    public func stopsAtSecondFactor(_ account: Account) -> Bool {
        if case .continueSession = completion { return false }
        return SecondFactorRules.requiresSecondFactor(account)
    }

    /// What a sign-in that stops at a second factor records: the preparation (a link, a
    /// proven email), not the sign-in. The second factor's step completes it.
    public var commandsBeforeSecondFactor: [Command] {
        switch completion {
        case .signIn, .continueSession: preparation
        case .emailLink(let email): preparation + [.proveEmailByLink(project, uid, email: email)]
        }
    }

    /// The preparation, then the sign-in that records the session's refresh token.
    public func commands(refreshTokenHash: String?) -> [Command] {
        let finish: Command =
            switch completion {
            case .signIn(let method): .signIn(project, uid, method: method, refreshTokenHash: refreshTokenHash)
            case .continueSession(let method):
                .continueSession(project, uid, method: method, refreshTokenHash: refreshTokenHash)
            case .emailLink(let email): .completeEmailLinkSignIn(project, uid, email: email, refreshTokenHash: refreshTokenHash)
            }
        return preparation + [finish]
    }
}

/// Whose word on an email address joins a provider's sign-in to the account that has the
/// address, when a project keeps one account per email.
public enum EmailTrust: Sendable {
    /// Firebase's rule: only a provider that is the authority for the address (Google for
    /// Gmail); any other provider's user confirms by signing in the old way and linking.
    case authoritativeProviders
    /// The Auth Emulator's (development): any provider that says the address is verified.
    case anyVerifiedEmail
}

extension ProviderID {
    /// Whether this provider owns `email`'s mailboxes, so its say-so proves the address.
    public func isAuthority(forEmail email: String) -> Bool {
        let domain = email.split(separator: "@").last.map { $0.lowercased() } ?? ""
        return self == .google && ["gmail.com", "googlemail.com"].contains(domain)
    }
}

/// What a federated sign-in comes to.
public enum FederatedSignInOutcome: Equatable, Sendable {
    case signIn(SignInPlan)
    /// One account per email: the provider's unverified email belongs to another account, which
    /// must sign in first and link (Firebase's `needConfirmation`, on iOS
    /// `accountExistsWithDifferentCredential`). Nothing is written.
    case needConfirmation(email: String, existingUid: UserID, providers: [ProviderID])
}

extension Decide {
    /// `signInWithIdp`. With `linkingTo`, the identity joins that signed-in account (unless its
    /// email belongs to another one). Otherwise the account already linked to the identity signs
    /// in; else, with one account per email, the account holding the identity's email: the
    /// provider joins it when `trust` accepts its word for the email, or the user must
    /// confirm; else a new account, unless `createsAccount` is false (a reauthentication:
    /// `USER_NOT_FOUND`). `newUid` is used only for a new account.
    public static func planFederatedSignIn(
        _ project: ProjectID, identity: ProviderLink, emailVerified: Bool, trust: EmailTrust = .authoritativeProviders,
        linkingTo current: UserID?, createsAccount: Bool = true, newUid: UserID, now: Int64, state: some DecisionState
    ) throws -> FederatedSignInOutcome {
        let method = SignInMethod.provider(identity.providerId)
        let email = identity.email.map(normalizeEmail)
        let oneAccountPerEmail = try state.config(of: project).oneAccountPerEmail
        func plan(_ uid: UserID, _ preparation: [Command]) -> FederatedSignInOutcome {
            .signIn(.existingAccount(project, uid, method: method, after: preparation))
        }
        if let current {
            if let email, oneAccountPerEmail, let owner = try state.owner(ofEmail: email, in: project), owner != current {
                throw AuthError.emailExists
            }
            return plan(current, [.linkProvider(project, current, identity)])
        }
        if let owner = try state.owner(ofProvider: identity.providerId, federatedId: identity.federatedId, in: project) {
            return plan(owner, [])
        }
        if let email, oneAccountPerEmail, let owner = try state.owner(ofEmail: email, in: project),
            let existing = try state.account(owner, in: project)
        {
            let trusted =
                emailVerified && (trust == .anyVerifiedEmail || identity.providerId.isAuthority(forEmail: email))
            guard trusted else {
                return .needConfirmation(email: email, existingUid: owner, providers: existing.providers.map(\.providerId))
            }
            // The provider vouches for the email: it proves the email as a link would (what was
            // added while it was unverified goes), then joins the account that has it.
            var preparation: [Command] = []
            if !existing.emailVerified { preparation.append(.confirmEmailByProvider(project, owner, email: email)) }
            preparation.append(.linkProvider(project, owner, identity))
            return plan(owner, preparation)
        }
        guard createsAccount else { throw AuthError.userNotFound }
        let created = AccountCreated(
            method: .federated, createdAt: now, email: email, emailVerified: emailVerified,
            displayName: identity.displayName, photoUrl: identity.photoUrl, providers: [identity])
        return .signIn(.newAccount(project, newUid, created, method: method))
    }

    /// Completing an email link for `email`: with `linkingTo`, the signed-in account takes the
    /// email (unless another account has it); otherwise the account with that email signs in, or
    /// a new one is created with it, verified. `newUid` is used only for a new account.
    public static func planEmailLinkSignIn(
        _ project: ProjectID, email: String, linkingTo current: UserID?, newUid: UserID, now: Int64,
        state: some DecisionState
    ) throws -> SignInPlan {
        let email = normalizeEmail(email)
        let owner = try state.owner(ofEmail: email, in: project)
        func plan(_ uid: UserID, isNew: Bool = false, _ preparation: [Command] = []) -> SignInPlan {
            SignInPlan(project: project, uid: uid, isNewUser: isNew, preparation: preparation, completion: .emailLink(email: email))
        }
        if let current {
            if let owner, owner != current { throw AuthError.emailExists }
            return plan(current)
        }
        if let owner { return plan(owner) }
        let created = AccountCreated(method: .emailLink, createdAt: now, email: email, emailVerified: true)
        return plan(newUid, isNew: true, [.createAccount(project, newUid, created)])
    }
}
