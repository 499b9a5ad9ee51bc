/// The pure folds: state + event -> state. Projections, `audit show` and tests all use these.
public enum Evolve {
    /// Live refresh tokens kept per account; issuing one more retires the oldest.
    public static let maxRefreshTokensPerAccount = 50

    /// Applies one event of an account's stream; `nil` means no account (never created, or gone).
    public static func account(_ account: Account?, _ payload: EventPayload, uid: UserID, at: Int64) -> Account? {
        var account = account
        apply(payload, to: &account, uid: uid, at: at)
        return account
    }

    /// `account(_:_:uid:at:)` in place: a fold over many events mutates one value instead of
    /// copying the account (and its arrays) once per event.
    public static func apply(_ payload: EventPayload, to state: inout Account?, uid: UserID, at: Int64) {
        if case .accountCreated(let created) = payload {
            state = accountCreated(created, uid: uid)
        } else {
            // Mutated where it lies, neither copied nor moved: the account's arrays stay uniquely
            // referenced, so the event changes them in place.
            if state?.evolve(payload, at: at) == false { state = nil }
        }
    }

    private static func accountCreated(_ created: AccountCreated, uid: UserID) -> Account {
        var account = Account(uid: uid, createdAt: created.createdAt)
        account.email = created.email
        account.emailVerified = created.email != nil && created.emailVerified
        account.password = created.password
        account.passwordUpdatedAt = created.password == nil ? nil : created.createdAt
        account.displayName = created.displayName
        account.photoUrl = created.photoUrl
        account.phoneNumber = created.phoneNumber
        account.providers = created.providers.sorted { $0.providerId < $1.providerId }
        account.customClaims = created.customClaims
        account.disabled = created.disabled
        account.isAnonymous = created.method == .anonymous
        account.emailLinkSignIn = created.method == .emailLink
        account.customAuth = created.method == .custom
        account.lastSignInAt = created.lastSignInAt
        return account
    }

    public static func project(_ config: ProjectConfig, _ payload: EventPayload) -> ProjectConfig {
        var next = config
        switch payload {
        case .projectConfigChanged(let change):
            return config.applying(change)
        case .identityProviderSet(let provider):
            next.identityProviders.removeAll { $0.providerId == provider.providerId }
            next.identityProviders.append(provider)
            next.identityProviders.sort { $0.providerId < $1.providerId }
        case .identityProviderDeleted(let deleted):
            next.identityProviders.removeAll { $0.providerId == deleted.providerId }
        default:
            break
        }
        return next
    }

    public static func oobCode(_ code: OOBCode?, _ payload: EventPayload, at: Int64) -> OOBCode? {
        switch payload {
        case .oobCodeIssued(let issued): return OOBCode(issued, issuedAt: at)
        case .oobCodeConsumed:
            // A used code is kept only to be refused again: its addresses are forgotten with
            // its key (`PersonalData.forgets`), so the fold forgets them too.
            guard var code else { return nil }
            code.consumed = true
            code.email = ""
            code.newEmail = nil
            return code
        case .oobCodeExpired:
            // Kept, without its addresses, so that using it still answers EXPIRED_OOB_CODE.
            guard var code else { return nil }
            code.email = ""
            code.newEmail = nil
            return code
        default: return code
        }
    }
}

extension Account {
    /// Applies an event to an existing account; `false` means the event ended the account.
    fileprivate mutating func evolve(_ payload: EventPayload, at: Int64) -> Bool {
        switch payload {
        case .accountCreated:
            break
        case .signInRecorded(let signIn):
            lastSignInAt = at
            if signIn.method == .emailLink { emailLinkSignIn = true }
            if signIn.method == .custom { customAuth = true }
        case .providerLinked(let linked):
            providers.removeAll { $0.providerId == linked.provider.providerId }
            providers.append(linked.provider)
            providers.sort { $0.providerId < $1.providerId }
        case .providerUnlinked(let unlinked):
            providers.removeAll { $0.providerId == unlinked.providerId }
            if unlinked.providerId == .phone { phoneNumber = nil }
            // The `password` provider is email+password and email link alike.
            if unlinked.providerId == .password {
                password = nil
                passwordUpdatedAt = at
                emailLinkSignIn = false
            }
        case .passwordSet(let set):
            password = set.password
            passwordUpdatedAt = at
        case .passwordRemoved:
            password = nil
            passwordUpdatedAt = at
        case .emailVerified(let verified):
            if email == verified.email { emailVerified = true }
        case .emailChanged(let changed):
            if initialEmail == nil, let before = email, changed.email != before { initialEmail = before }
            email = changed.email
            emailVerified = changed.email != nil && changed.verified
            // Without an email there is nothing to send a sign-in link to.
            if changed.email == nil { emailLinkSignIn = false }
        case .profileUpdated(let update):
            if let value = update.displayName { displayName = value }
            if let value = update.photoUrl { photoUrl = value }
            if let value = update.phoneNumber { phoneNumber = value }
            for field in update.deleted {
                switch field {
                case .displayName: displayName = nil
                case .photoUrl: photoUrl = nil
                case .phoneNumber: phoneNumber = nil
                }
            }
        case .customClaimsSet(let set):
            customClaims = set.claims
        case .accountDisabled:
            disabled = true
        case .accountEnabled:
            disabled = false
        case .sessionsRevoked(let revoked):
            validSince = max(validSince, revoked.validSince)
            refreshTokens = []
        case .refreshTokenIssued(let issued):
            refreshTokens.append(issued.tokenHash)
            if refreshTokens.count > Evolve.maxRefreshTokensPerAccount {
                refreshTokens.removeFirst(refreshTokens.count - Evolve.maxRefreshTokensPerAccount)
            }
        case .refreshTokenRevoked(let revoked):
            refreshTokens.removeAll { $0 == revoked.tokenHash }
        case .secondFactorEnrolled(let factor):
            secondFactors.removeAll { $0.enrollmentId == factor.enrollmentId }
            secondFactors.append(factor)
        case .secondFactorWithdrawn(let withdrawn):
            secondFactors.removeAll { $0.enrollmentId == withdrawn.enrollmentId }
        case .secondFactorUsed(let used):
            if let index = secondFactors.firstIndex(where: { $0.enrollmentId == used.enrollmentId }) {
                secondFactors[index].lastUsedStep = max(secondFactors[index].lastUsedStep, used.step)
            }
        case .accountDeleted, .anonymousPurged, .accountErased:
            return false
        case .oobCodeIssued, .oobCodeConsumed, .oobCodeExpired, .projectConfigChanged, .identityProviderSet, .identityProviderDeleted,
            .termStarted, .signingKeyPublished, .signingKeyActivated, .signingKeyWithdrawn:
            break
        }
        // Upgrading is one-way: an account that ever gained a sign-in method is never
        // anonymous again, so cleanup can never delete it.
        if isAnonymous && hasSignInMethod { isAnonymous = false }
        return true
    }
}
