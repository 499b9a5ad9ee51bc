import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

/// Firebase, on email-link sign-in: "after sign-in completes, every earlier session is revoked".
/// Proving an email that was unverified (by link, or by a provider that vouches for it) ends
/// every session opened before, even when the impostor left nothing to remove; a repeat sign-in
/// on a verified email ends none.
@Suite("proving an unverified email ends every earlier session")
struct EmailProofRevocationTests {
    /// The impostor's setups that leave nothing for the owner's proof to remove, each returning
    /// the impostor's (uid, idToken, refreshToken).
    enum Impostor: String, CaseIterable, CustomStringConvertible {
        /// Signs up with the victim's address, then removes their own password.
        case passwordRemoved
        /// An anonymous user who sets the victim's address as the account's email.
        case anonymousWithEmail

        var description: String { rawValue }

        func prepare(_ api: APIClient, email: String) async throws -> (uid: String, idToken: String, refreshToken: String) {
            switch self {
            case .passwordRemoved:
                let signedUp = try await api.signUp(email: email)
                let dropped = try await api.v1(
                    "update", ["idToken": signedUp["idToken"] ?? .null, "deleteAttribute": ["PASSWORD"], "returnSecureToken": true])
                #expect(dropped.status == 200, "\(dropped.json)")
                return (
                    try #require(signedUp.string("localId")), try #require(dropped.string("idToken") ?? signedUp.string("idToken")),
                    try #require(dropped.string("refreshToken") ?? signedUp.string("refreshToken"))
                )
            case .anonymousWithEmail:
                let anonymous = try await api.v1("signUp", ["returnSecureToken": true])
                let changed = try await api.v1(
                    "update", ["idToken": anonymous["idToken"] ?? .null, "email": .string(email), "returnSecureToken": true])
                #expect(changed.status == 200, "\(changed.json)")
                return (
                    try #require(anonymous.string("localId")), try #require(changed.string("idToken") ?? anonymous.string("idToken")),
                    try #require(changed.string("refreshToken") ?? anonymous.string("refreshToken"))
                )
            }
        }
    }

    @Test("the owner's email link ends the impostor's refresh and ID tokens", arguments: Impostor.allCases)
    func emailLink(_ impostor: Impostor) async throws {
        try await APIHarness.run { harness, api in
            let (uid, idToken, refreshToken) = try await impostor.prepare(api, email: "victim@example.com")
            #expect(try await api.lookup(idToken).status == 200)
            harness.clock.advance(milliseconds: 1500)
            let code = try await EmailLinkTests.sendLink(api, to: "victim@example.com")
            let owner = try await api.v3("emailLinkSignin", ["email": "victim@example.com", "oobCode": .string(code)])
            #expect(owner.status == 200)
            #expect(owner.string("localId") == uid)
            #expect(try await api.lookup(idToken).errorCode == "TOKEN_EXPIRED")
            // A refresh token the daemon issued and the account no longer holds has expired, as
            // Firebase answers (a guessed one is only unknown: SessionTests.forgedRefreshToken).
            #expect(try await api.refresh(refreshToken).errorCode == "TOKEN_EXPIRED")
            // The owner's own session, begun by this sign-in, is good.
            #expect(try await api.lookup(try #require(owner.string("idToken"))).status == 200)
            #expect(try await api.refresh(try #require(owner.string("refreshToken"))).status == 200)
            let payloads = try harness.context.store.audit.events(of: .account(APIHarness.project, UserID(uid)!)).map(\.payload)
            #expect(
                payloads.contains { if case .sessionsRevoked(let revoked) = $0 { revoked.reason == .emailLinkVerified } else { false } })
        }
    }

    @Test("a provider vouching for the email ends the impostor's sessions too", arguments: Impostor.allCases)
    func provider(_ impostor: Impostor) async throws {
        try await APIHarness.run { harness, api in
            let (uid, idToken, refreshToken) = try await impostor.prepare(api, email: "victim@gmail.com")
            harness.clock.advance(milliseconds: 1500)
            let owner = try await api.v3(
                "verifyAssertion",
                FederatedTests.credential("google.com", ["sub": "g-owner", "email": "victim@gmail.com", "email_verified": true]))
            #expect(owner.string("localId") == uid, "\(owner.json)")
            #expect(try await api.lookup(idToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(refreshToken).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(try #require(owner.string("refreshToken"))).status == 200)
            let payloads = try harness.context.store.audit.events(of: .account(APIHarness.project, UserID(uid)!)).map(\.payload)
            #expect(payloads.contains { if case .sessionsRevoked(let revoked) = $0 { revoked.reason == .providerVerified } else { false } })
        }
    }

    @Test("the owner's repeat sign-ins by link keep their other sessions: the email was already proven")
    func repeatSignIns() async throws {
        try await APIHarness.run { harness, api in
            let first = try await api.v3(
                "emailLinkSignin",
                ["email": "owner@example.com", "oobCode": .string(try await EmailLinkTests.sendLink(api, to: "owner@example.com"))])
            #expect(first["isNewUser"] == true)
            harness.clock.advance(milliseconds: 1500)
            let second = try await api.v3(
                "emailLinkSignin",
                ["email": "owner@example.com", "oobCode": .string(try await EmailLinkTests.sendLink(api, to: "owner@example.com"))])
            #expect(second.string("localId") == first.string("localId"))
            for session in [first, second] {
                #expect(try await api.lookup(try #require(session.string("idToken"))).status == 200)
                #expect(try await api.refresh(try #require(session.string("refreshToken"))).status == 200)
            }
            let uid = try #require(first.string("localId"))
            #expect(try !harness.eventTypes(of: uid).contains("account.sessions_revoked"))
        }
    }
}
