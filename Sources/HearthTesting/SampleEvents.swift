import HearthDomain

/// At least one payload of every event type, with optional fields both filled and empty.
public enum SampleEvents {
    static let hash = PasswordHash(
        algorithm: .firebaseScrypt, hash: Array(0..<32), salt: [1, 2, 3], rounds: 8, memoryCost: 14)
    static let link = ProviderLink(
        providerId: "github.com", federatedId: "1234", email: "octo@x.io", displayName: "Octo",
        photoUrl: "https://x.io/o.png", screenName: "octo")

    public static let all: [EventPayload] = [
        .accountCreated(AccountCreated(method: .anonymous, createdAt: 1)),
        .accountCreated(
            AccountCreated(
                method: .import, createdAt: 2, email: "i@x.io", emailVerified: true, password: hash, displayName: "Imp",
                photoUrl: "https://x.io/p", phoneNumber: "+15550100", providers: [link], customClaims: #"{"a":1}"#,
                disabled: true, lastSignInAt: 3)),
        .signInRecorded(SignInRecorded(method: .password)),
        .providerLinked(ProviderLinked(provider: link)),
        .providerLinked(ProviderLinked(provider: ProviderLink(providerId: "google.com", federatedId: "g"))),
        .providerUnlinked(ProviderUnlinked(providerId: "github.com")),
        .providerUnlinked(ProviderUnlinked(providerId: "facebook.com", reason: .emailLinkVerified)),
        .passwordSet(PasswordSet(password: hash, reason: .rehashed)),
        .passwordRemoved(PasswordRemoved(reason: .emailLinkVerified)),
        .emailVerified(EmailVerified(email: "v@x.io")),
        .emailChanged(EmailChanged(email: "n@x.io", verified: false)),
        .emailChanged(EmailChanged(email: nil, verified: false)),
        .profileUpdated(ProfileUpdated(displayName: "D", photoUrl: "https://x.io/d", phoneNumber: "+1555")),
        .profileUpdated(ProfileUpdated(deleted: [.displayName, .phoneNumber])),
        .customClaimsSet(CustomClaimsSet(claims: #"{"admin":true}"#)),
        .customClaimsSet(CustomClaimsSet(claims: nil)),
        .accountDisabled,
        .accountEnabled,
        .sessionsRevoked(SessionsRevoked(validSince: 1_800_000_000, reason: .passwordChanged)),
        .refreshTokenIssued(RefreshTokenIssued(tokenHash: String(repeating: "ab", count: 32))),
        .refreshTokenIssued(RefreshTokenIssued(tokenHash: String(repeating: "cd", count: 32), namesAccount: false)),
        .refreshTokenRevoked(RefreshTokenRevoked(tokenHash: String(repeating: "ab", count: 32))),
        .accountDeleted(AccountDeleted(by: .user)),
        .anonymousPurged(AnonymousPurged(dueAt: 99, rule: .existedWhenCleanupTurnedOn, since: 9)),
        .accountErased(AccountErased(reason: "subject request #12")),
        .secondFactorEnrolled(
            SecondFactor(
                enrollmentId: "e1", displayName: "Phone app", enrolledAt: 8, sealedSecret: Array(repeating: 9, count: 48),
                lastUsedStep: 59_000_000)),
        .secondFactorEnrolled(
            SecondFactor(enrollmentId: "e2", displayName: nil, enrolledAt: 9, sealedSecret: [1], lastUsedStep: 0)),
        .secondFactorUsed(SecondFactorUsed(enrollmentId: "e1", step: 59_000_001)),
        .secondFactorWithdrawn(SecondFactorWithdrawn(enrollmentId: "e1", by: .user)),
        .sessionsRevoked(SessionsRevoked(validSince: 1_800_000_000, reason: .secondFactorWithdrawn)),
        .oobCodeIssued(OOBCodeIssued(requestType: .emailSignIn, email: "o@x.io", expiresAt: 5)),
        .oobCodeIssued(
            OOBCodeIssued(requestType: .verifyAndChangeEmail, email: "o@x.io", uid: UserID("u1"), newEmail: "p@x.io", expiresAt: 6)),
        .oobCodeIssued(OOBCodeIssued(requestType: .recoverEmail, email: "o@x.io", uid: UserID("u1"), newEmail: "p@x.io", expiresAt: 7)),
        .oobCodeConsumed,
        .oobCodeExpired,
        .projectConfigChanged(ProjectConfigChange(anonymousCleanup: true)),
        .projectConfigChanged(
            ProjectConfigChange(
                multiFactor: MultiFactorConfig(state: .enabled, totpEnabled: true, adjacentIntervals: 1),
                passwordPolicy: PasswordPolicy(enforced: true, minLength: 10, requireUppercase: true, requireNonAlphanumeric: true))),
        .projectConfigChanged(
            ProjectConfigChange(
                emailPasswordEnabled: true, emailLinkEnabled: false, anonymousEnabled: true, enabledProviders: ["google.com"],
                authorizedDomains: ["localhost", "app.x.io"], linkDomains: ["links.x.io"], anonymousCleanup: false,
                oneAccountPerEmail: false, anonymousCleanupPeriodSeconds: 60, improvedEmailPrivacy: true,
                iosBundleIds: ["io.x.app"], androidPackages: ["io.x.android"],
                iosApps: [
                    IOSApp(bundleId: "io.x.app", teamId: "ABCDE12345", appStoreId: "123"),
                    IOSApp(bundleId: "io.x.clip", teamId: "ABCDE12345"),
                ],
                androidApps: [AndroidApp(packageName: "io.x.android", sha256Hashes: [String(repeating: "AB:", count: 31) + "CD"])])),
        .identityProviderSet(
            IdentityProviderConfig(
                providerId: .github, enabled: true, clientId: "Iv1.abc",
                clientSecret: .sealed(sealed: Array(repeating: 7, count: 40), fingerprint: "0123456789abcdef"))),
        .identityProviderSet(
            IdentityProviderConfig(
                providerId: "oidc.corp", enabled: false, clientId: "corp", clientSecret: .file(path: "/run/credentials/corp"),
                issuer: "https://id.corp.example", displayName: "Corp", responseType: .init(idToken: false, code: true))),
        .identityProviderDeleted(IdentityProviderDeleted(providerId: "oidc.corp")),
        .termStarted(TermStarted(term: 7, node: "hearth-b", after: 41, afterHash: String(repeating: "ab", count: 32))),
        .signingKeyPublished(
            SigningKeyPublished(
                keyId: String(repeating: "c4", count: 20), algorithm: "RS256", replaces: String(repeating: "9e", count: 20),
                activatesAt: 1_700_003_600_000, retireAfterSeconds: 3_900)),
        .signingKeyActivated(SigningKeyStep(keyId: String(repeating: "c4", count: 20))),
        .signingKeyWithdrawn(SigningKeyStep(keyId: String(repeating: "9e", count: 20))),
    ]

    /// The stream a sample payload is appended to.
    public static func stream(for payload: EventPayload, project: ProjectID) -> StreamID {
        switch payload.type.name {
        case let name where name.hasPrefix("oob_code."): .oobCode(project, "code")
        case let name where name.hasPrefix("project."): .project(project)
        case let name where name.hasPrefix("cluster."): .cluster(.terms)
        case let name where name.hasPrefix("signing_key."): .cluster(.signingKeys)
        default: .account(project, UserID("sample")!)
        }
    }
}
