/// The business rules: `decide(command, state, now) -> [event]`, throwing `AuthError` when a rule
/// refuses. Pure: reads only through `DecisionState`, gets time as an argument.
public enum Decide {
    public static func decide(_ command: Command, state: some DecisionState, now: Int64) throws -> [EventPayload] {
        switch command {
        case .createAccount(let project, let uid, let created):
            return try createAccount(project, uid, created, state)
        case .replaceAccount(let project, let uid, let created):
            guard try state.account(uid, in: project) != nil else { return try createAccount(project, uid, created, state) }
            return [.accountDeleted(AccountDeleted(by: .admin))]
                + (try createAccount(project, uid, created, state, replacing: true))
                + [.sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .admin))]
        case .importAccount(let project, let uid, let created, let factors, let overwrite):
            try SecondFactorRules.checkImported(factors)
            let account: Command = overwrite ? .replaceAccount(project, uid, created) : .createAccount(project, uid, created)
            return try decide(account, state: state, now: now) + factors.map { .secondFactorEnrolled($0) }
        case .signIn(let project, let uid, let method, let tokenHash):
            _ = try activeAccount(uid, project, state)
            if method == .password, !(try state.config(of: project).emailPasswordEnabled) {
                throw AuthError.passwordLoginDisabled
            }
            return [.signInRecorded(SignInRecorded(method: method))] + issue(tokenHash)
        case .continueSession(let project, let uid, let method, let tokenHash):
            _ = try activeAccount(uid, project, state)
            return [.signInRecorded(SignInRecorded(method: method))] + issue(tokenHash)
        case .linkProvider(let project, let uid, let link):
            return try linkProvider(project, uid, link, state)
        case .unlinkProviders(let project, let uid, let providerIds):
            let account = try existingAccount(uid, project, state)
            return unlink(providerIds, from: account)
        case .setPassword(let project, let uid, let hash, let email, let reason):
            let account = try existingAccount(uid, project, state)
            // A user's own new password (linking or changing it): only while the provider is on.
            if reason != .rehashed { try requirePasswordProvider(project, state) }
            var events: [EventPayload] = []
            if let email, normalizeEmail(email) != account.email {
                events += try changeEmail(to: normalizeEmail(email), verified: false, uid, project, state)
            }
            events.append(.passwordSet(PasswordSet(password: hash, reason: account.password == nil ? .initial : reason)))
            return events
        case .completeEmailLinkSignIn(let project, let uid, let email, let tokenHash):
            return try decide(.proveEmailByLink(project, uid, email: email), state: state, now: now)
                + [.signInRecorded(SignInRecorded(method: .emailLink))] + issue(tokenHash)
        case .proveEmailByLink(let project, let uid, let email):
            let account = try activeAccount(uid, project, state)
            try requireEmailLink(project, state)
            return try completeEmailLink(account, email: normalizeEmail(email), project, state, now: now)
        case .enrollSecondFactor(let project, let uid, let factor):
            let account = try activeAccount(uid, project, state)
            try SecondFactorRules.checkEnrolment(of: account, config: try state.config(of: project))
            guard account.secondFactor(factor.enrollmentId) == nil else { throw AuthError.secondFactorExists }
            return [.secondFactorEnrolled(factor)]
        case .withdrawSecondFactor(let project, let uid, let enrollmentId, let actor):
            let account = try existingAccount(uid, project, state)
            guard account.secondFactor(enrollmentId) != nil else { throw AuthError.secondFactorNotFound }
            try SecondFactorRules.checkWithdrawal(from: account, by: actor, config: try state.config(of: project))
            return [
                .secondFactorWithdrawn(SecondFactorWithdrawn(enrollmentId: enrollmentId, by: actor)),
                .sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .secondFactorWithdrawn)),
            ]
        case .useSecondFactor(let project, let uid, let enrollmentId, let step, let pendingSince):
            let account = try activeAccount(uid, project, state)
            try SecondFactorRules.checkPending(since: pendingSince, account: account, now: now)
            guard let factor = account.secondFactor(enrollmentId) else { throw AuthError.secondFactorNotFound }
            guard step > factor.lastUsedStep else { throw AuthError.invalidSecondFactorCode }
            return [.secondFactorUsed(SecondFactorUsed(enrollmentId: enrollmentId, step: step))]
        case .confirmEmailByProvider(let project, let uid, let email):
            let account = try activeAccount(uid, project, state)
            guard account.email == normalizeEmail(email) else { throw AuthError.invalidEmail }
            return confirmEmail(account, proof: .identityProvider, now: now)
        case .resetPassword(let project, let uid, let hash, let email, let codeIssuedAt):
            let account = try codeRecipient(uid, email: email, project, state)
            // A later reset or change supersedes the code: a stale link in a mailbox someone
            // else read must not undo the owner's new password.
            if let updated = account.passwordUpdatedAt, updated > codeIssuedAt { throw AuthError.invalidOobCode }
            // The code reached the inbox, so the email is proven; whoever knew the old password
            // (and every session it opened) is shut out.
            var events: [EventPayload] = [.passwordSet(PasswordSet(password: hash, reason: .reset))]
            if !account.emailVerified { events.append(.emailVerified(EmailVerified(email: email))) }
            events.append(.sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .passwordChanged)))
            return events
        case .applyEmailCode(let project, let uid, let email, let newEmail):
            let account = try codeRecipient(uid, email: email, project, state)
            guard let newEmail = newEmail.map(normalizeEmail), newEmail != email else {
                return account.emailVerified ? [] : [.emailVerified(EmailVerified(email: email))]
            }
            // A changed email ends earlier sessions, as any email change does.
            return try changeEmail(to: newEmail, verified: true, uid, project, state)
                + [.sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .emailChanged))]
        case .update(let project, let uid, let update):
            return try self.update(try existingAccount(uid, project, state), update, project, state, now: now)
        case .revokeRefreshToken(let project, let uid, let tokenHash):
            let account = try existingAccount(uid, project, state)
            guard account.refreshTokens.contains(tokenHash) else { return [] }
            return [.refreshTokenRevoked(RefreshTokenRevoked(tokenHash: tokenHash))]
        case .deleteAccount(let project, let uid, let actor):
            _ = try existingAccount(uid, project, state)
            return [.accountDeleted(AccountDeleted(by: actor))]
        case .batchDeleteAccount(let project, let uid, let force):
            guard let account = try state.account(uid, in: project) else { return [] }
            guard force || account.disabled else { throw AuthError.notDisabled }
            return [.accountDeleted(AccountDeleted(by: .admin))]
        case .linkPassword(let project, let uid, let hash, let email):
            let account = try existingAccount(uid, project, state)
            let email = normalizeEmail(email)
            if account.password == nil && (account.email == nil || account.email == email) {
                return try decide(.setPassword(project, uid, hash, email: email, reason: .initial), state: state, now: now)
            }
            var update = AccountUpdate(email: email, password: hash)
            update.byAccountHolder = true
            return try decide(.update(project, uid, update), state: state, now: now)
        case .purgeAnonymous(let project, let uid):
            let account = try existingAccount(uid, project, state)
            guard account.isAnonymous else { throw AuthError.notAnonymous }
            guard let schedule = try state.cleanupSchedule(uid, in: project), schedule.dueAt <= now else {
                throw AuthError.notDue
            }
            return [.anonymousPurged(AnonymousPurged(schedule))]
        case .eraseAccount(let project, let uid, let reason):
            _ = try existingAccount(uid, project, state)
            guard let erased = AccountErased(validating: reason) else { throw AuthError.invalidErasureReason }
            return [.accountErased(erased)]
        case .issueOOBCode(let project, let codeHash, let issued):
            guard try state.oobCode(codeHash, in: project) == nil else { throw AuthError.invalidOobCode }
            return [.oobCodeIssued(issued)]
        case .consumeOOBCode(let project, let codeHash):
            guard let code = try state.oobCode(codeHash, in: project), !code.consumed else {
                throw AuthError.invalidOobCode
            }
            guard code.expiresAt > now else { throw AuthError.expiredOobCode }
            return [.oobCodeConsumed]
        case .expireOOBCode(let project, let codeHash):
            guard let code = try state.oobCode(codeHash, in: project), !code.consumed, !code.isForgotten else {
                throw AuthError.invalidOobCode
            }
            guard code.expiresAt <= now else { throw AuthError.notDue }
            return [.oobCodeExpired]
        case .changeProjectConfig(let project, let change):
            if let period = change.anonymousCleanupPeriodSeconds, !ProjectConfig.anonymousCleanupPeriodRange.contains(period) {
                throw AuthError.invalidProjectConfig("anonymousCleanupAfterSeconds must be from 1 to 2592000 (30 days)")
            }
            if let multiFactor = change.multiFactor, !MultiFactorConfig.adjacentIntervalsRange.contains(multiFactor.adjacentIntervals) {
                throw AuthError.invalidProjectConfig("mfa adjacentIntervals must be from 0 to 10")
            }
            if let policy = change.passwordPolicy, !policy.isValid {
                throw AuthError.invalidProjectConfig(
                    "a password policy's minimum length is 6 to 30, its maximum at least that and at most 4096")
            }
            // Only what differs is recorded: the ledger's history of a project's settings is
            // a list of real changes.
            let current = try state.config(of: project)
            let effective = current.change(to: current.applying(change))
            return effective.isEmpty ? [] : [.projectConfigChanged(effective)]
        case .setIdentityProvider(let project, let provider, let creating):
            let existing = try state.config(of: project).identityProvider(provider.providerId)
            if creating && existing != nil { throw AuthError.configurationExists }
            if !creating && existing == nil { throw AuthError.configurationNotFound }
            if provider.enabled && provider.needsSecret && provider.clientSecret == nil {
                throw AuthError.invalidProjectConfig("\(provider.providerId) needs a clientSecret to be enabled")
            }
            return existing == provider ? [] : [.identityProviderSet(provider)]
        case .deleteIdentityProvider(let project, let providerId):
            guard try state.config(of: project).identityProvider(providerId) != nil else {
                throw AuthError.configurationNotFound
            }
            return [.identityProviderDeleted(IdentityProviderDeleted(providerId: providerId))]
        }
    }

    private static func issue(_ tokenHash: String?) -> [EventPayload] {
        tokenHash.map { [.refreshTokenIssued(RefreshTokenIssued(tokenHash: $0))] } ?? []
    }

    /// Email/Password off: no password is set by its user (Firebase's OPERATION_NOT_ALLOWED).
    private static func requirePasswordProvider(_ project: ProjectID, _ state: some DecisionState) throws {
        guard try state.config(of: project).emailPasswordEnabled else { throw AuthError.operationNotAllowed }
    }

    /// Email links need the Email/Password provider and email links on (`passwordRequired` false).
    private static func requireEmailLink(_ project: ProjectID, _ state: some DecisionState) throws {
        guard try state.config(of: project).allowsEmailLinkSignIn else { throw AuthError.operationNotAllowed }
    }

    private static func existingAccount(_ uid: UserID, _ project: ProjectID, _ state: some DecisionState) throws -> Account {
        guard let account = try state.account(uid, in: project) else { throw AuthError.userNotFound }
        return account
    }

    /// The account an emailed code acts on; a code whose account is gone or has since moved to
    /// another email no longer applies.
    private static func codeRecipient(
        _ uid: UserID, email: String, _ project: ProjectID, _ state: some DecisionState
    ) throws -> Account {
        guard let account = try state.account(uid, in: project), account.email == normalizeEmail(email) else {
            throw AuthError.invalidOobCode
        }
        return account
    }

    private static func activeAccount(_ uid: UserID, _ project: ProjectID, _ state: some DecisionState) throws -> Account {
        let account = try existingAccount(uid, project, state)
        guard !account.disabled else { throw AuthError.userDisabled }
        return account
    }

    /// `replacing`: the uid's current account is about to be deleted, so what it holds (its
    /// email, its providers, its phone) is no conflict.
    private static func createAccount(
        _ project: ProjectID, _ uid: UserID, _ requested: AccountCreated, _ state: some DecisionState, replacing: Bool = false
    ) throws -> [EventPayload] {
        let existing = try state.account(uid, in: project)
        guard replacing || existing == nil else { throw AuthError.uidExists }
        func heldByAnother(_ owner: UserID?) -> Bool { owner != nil && !(replacing && owner == uid) }
        let config = try state.config(of: project)
        var created = requested
        created.email = created.email.map(normalizeEmail)
        switch created.method {
        case .anonymous:
            guard config.anonymousEnabled else { throw AuthError.operationNotAllowed }
        case .password:
            guard config.emailPasswordEnabled else { throw AuthError.operationNotAllowed }
        case .emailLink:
            try requireEmailLink(project, state)
        case .federated:
            guard created.providers.allSatisfy({ config.allowsProvider($0.providerId) }) else {
                throw AuthError.operationNotAllowed
            }
        case .admin, .import, .custom:
            break
        }
        for link in created.providers {
            if heldByAnother(try state.owner(ofProvider: link.providerId, federatedId: link.federatedId, in: project)) {
                throw AuthError.federatedUserIdAlreadyLinked
            }
        }
        if let phone = created.phoneNumber, heldByAnother(try state.owner(ofPhone: phone, in: project)) {
            throw AuthError.phoneNumberExists
        }
        if let email = created.email, let owner = try state.owner(ofEmail: email, in: project), heldByAnother(owner) {
            // A federated sign-in may share an email only when the project allows several
            // accounts per email; then the email stays on the provider, not the account.
            guard created.method == .federated else { throw AuthError.emailExists }
            guard !config.oneAccountPerEmail else { throw AuthError.needConfirmation(email: email, existingUid: owner) }
            created.email = nil
            created.emailVerified = false
        }
        return [.accountCreated(created)]
    }

    private static func linkProvider(
        _ project: ProjectID, _ uid: UserID, _ link: ProviderLink, _ state: some DecisionState
    ) throws -> [EventPayload] {
        let account = try activeAccount(uid, project, state)
        guard try state.config(of: project).allowsProvider(link.providerId) else { throw AuthError.operationNotAllowed }
        // Linked already, to another account or to this one (relinking one's own credential),
        // as Firebase answers.
        if try state.owner(ofProvider: link.providerId, federatedId: link.federatedId, in: project) != nil {
            throw AuthError.federatedUserIdAlreadyLinked
        } else if account.provider(link.providerId) != nil {
            throw AuthError.providerAlreadyLinked
        }
        var events: [EventPayload] = [.providerLinked(ProviderLinked(provider: link))]
        // An account without an email takes the provider's, when no other account has it.
        if account.email == nil, let email = link.email.map(normalizeEmail),
            try state.owner(ofEmail: email, in: project) == nil
        {
            events.append(.emailChanged(EmailChanged(email: email, verified: false)))
        }
        return events
    }

    /// `password` is Firebase's provider for both email+password and email link: unlinking it
    /// ends both, and the account's email goes with it (as the Auth Emulator answers).
    /// `emailGoing`: the same update already removes the email.
    private static func unlink(_ providerIds: [ProviderID], from account: Account, emailGoing: Bool = false) -> [EventPayload] {
        var events: [EventPayload] = []
        for providerId in Set(providerIds).sorted() {
            switch providerId {
            case .password where account.password != nil || account.emailLinkSignIn:
                events.append(.providerUnlinked(ProviderUnlinked(providerId: .password)))
                if account.email != nil && !emailGoing { events.append(.emailChanged(EmailChanged(email: nil, verified: false))) }
            case .phone where account.phoneNumber != nil:
                events.append(.providerUnlinked(ProviderUnlinked(providerId: providerId)))
            case _ where account.provider(providerId) != nil:
                events.append(.providerUnlinked(ProviderUnlinked(providerId: providerId)))
            default:
                break
            }
        }
        return events
    }

    private static func changeEmail(
        to email: String, verified: Bool, _ uid: UserID, _ project: ProjectID, _ state: some DecisionState
    ) throws -> [EventPayload] {
        if let owner = try state.owner(ofEmail: email, in: project), owner != uid { throw AuthError.emailExists }
        return [.emailChanged(EmailChanged(email: email, verified: verified))]
    }

    /// Email-link sign-in: proving the email by link verifies it; a password set while the
    /// email was unverified (possibly by an impostor) is removed and every earlier session
    /// revoked.
    private static func completeEmailLink(
        _ account: Account, email: String, _ project: ProjectID, _ state: some DecisionState, now: Int64
    ) throws -> [EventPayload] {
        if account.email != email {
            guard account.email == nil else { throw AuthError.invalidEmail }
            return try changeEmail(to: email, verified: true, account.uid, project, state)
        }
        return confirmEmail(account, proof: .emailLink, now: now)
    }

    private enum EmailProof {
        case emailLink, identityProvider
    }

    /// Proven ownership of the account's unverified email verifies it. Every sign-in method
    /// added while it was unverified, by whoever typed that email, goes: the password, and each
    /// provider that is not the address's own authority (Google for Gmail). Then every earlier
    /// session ends (Firebase revokes all existing sessions when an email link is completed),
    /// whether or not anything was removed: whoever typed the address may hold a session with
    /// nothing left to remove (they dropped their own password, or set the address on an
    /// anonymous account). A repeat proof of a verified email ends nothing.
    private static func confirmEmail(_ account: Account, proof: EmailProof, now: Int64) -> [EventPayload] {
        guard let email = account.email, !account.emailVerified else { return [] }
        var events: [EventPayload] = []
        let (removed, unlinked, revoked): (PasswordRemoved.Reason, ProviderUnlinked.Reason, SessionsRevoked.Reason) =
            switch proof {
            case .emailLink: (.emailLinkVerified, .emailLinkVerified, .emailLinkVerified)
            case .identityProvider: (.providerVerified, .providerVerified, .providerVerified)
            }
        if account.password != nil { events.append(.passwordRemoved(PasswordRemoved(reason: removed))) }
        for link in account.providers where !link.providerId.isAuthority(forEmail: email) {
            events.append(.providerUnlinked(ProviderUnlinked(providerId: link.providerId, reason: unlinked)))
        }
        events.append(.sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: revoked)))
        events.append(.emailVerified(EmailVerified(email: email)))
        return events
    }

    private static func revocationTime(_ seconds: Int64, now: Int64) throws -> Int64 {
        guard (0...(now / 1000 + SessionRevocation.allowedSkewSeconds)).contains(seconds) else {
            throw AuthError.revocationTimeOutOfRange
        }
        return seconds
    }

    private static func update(
        _ account: Account, _ update: AccountUpdate, _ project: ProjectID, _ state: some DecisionState, now: Int64
    ) throws -> [EventPayload] {
        var events: [EventPayload] = []
        let uid = account.uid
        let newEmail = update.email.map(normalizeEmail).flatMap { $0 == account.email ? nil : $0 }
        if let email = newEmail {
            events += try changeEmail(to: email, verified: update.emailVerified ?? false, uid, project, state)
        } else if update.removeEmail, account.email != nil {
            events.append(.emailChanged(EmailChanged(email: nil, verified: false)))
        } else if let verified = update.emailVerified, verified != account.emailVerified, let email = account.email {
            events.append(
                verified ? .emailVerified(EmailVerified(email: email)) : .emailChanged(EmailChanged(email: email, verified: false)))
        }
        if let password = update.password {
            if update.byAccountHolder { try requirePasswordProvider(project, state) }
            events.append(.passwordSet(PasswordSet(password: password, reason: account.password == nil ? .initial : .changed)))
        }
        var profile = update.profile
        // A field set and deleted in the same update ends up set.
        profile.deleted = profile.deleted.filter { field in
            switch field {
            case .displayName: profile.displayName == nil
            case .photoUrl: profile.photoUrl == nil
            case .phoneNumber: profile.phoneNumber == nil
            }
        }
        if let phone = profile.phoneNumber {
            if let owner = try state.owner(ofPhone: phone, in: project), owner != uid { throw AuthError.phoneNumberExists }
            if phone == account.phoneNumber { profile.phoneNumber = nil }
        }
        if profile.displayName == account.displayName { profile.displayName = nil }
        if profile.photoUrl == account.photoUrl { profile.photoUrl = nil }
        profile.deleted = profile.deleted.filter { field in
            switch field {
            case .displayName: account.displayName != nil
            case .photoUrl: account.photoUrl != nil
            case .phoneNumber: account.phoneNumber != nil
            }
        }
        if profile != ProfileUpdated() { events.append(.profileUpdated(profile)) }
        if let claims = update.customClaims, claims != account.customClaims {
            events.append(.customClaimsSet(CustomClaimsSet(claims: claims)))
        }
        if let disabled = update.disabled, disabled != account.disabled {
            events.append(disabled ? .accountDisabled : .accountEnabled)
            // Disabling ends the account's sessions, as in Firebase. While disabled they answer
            // USER_DISABLED; re-enabling revokes them, so they never come back.
            if !disabled { events.append(.sessionsRevoked(SessionsRevoked(validSince: now / 1000, reason: .accountReenabled))) }
        }
        if update.removePassword, account.password != nil, update.password == nil, !update.unlinkProviders.contains(.password) {
            events.append(.passwordRemoved(PasswordRemoved(reason: .unlinked)))
        }
        events += unlink(update.unlinkProviders, from: account, emailGoing: newEmail == nil && update.removeEmail)
        // A new password or a new email ends every session opened before it; so does an
        // explicit revocation, at the second an administrator chose if one did.
        let revokedAt: Int64? =
            switch update.revokeSessions {
            case .since(let seconds)?: try revocationTime(seconds, now: now)
            case .now?: now / 1000
            case nil: update.password != nil || newEmail != nil ? now / 1000 : nil
            }
        if let revokedAt {
            let reason: SessionsRevoked.Reason =
                update.password != nil ? .passwordChanged : newEmail != nil ? .emailChanged : .admin
            events.append(.sessionsRevoked(SessionsRevoked(validSince: revokedAt, reason: reason)))
        }
        return events
    }
}
