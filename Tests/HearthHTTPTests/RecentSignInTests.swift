import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthTesting
import HearthWire
import Testing

/// Firebase's recent-login rule: email and password changes, deletion and linking need a
/// session that signed in within five minutes (production; development is lenient by default).
@Suite("recent sign-in for sensitive changes")
struct RecentSignInTests {
    static func production(_ configuration: inout ServerSettings) {
        configuration.profile = .production
        configuration.projects.apiKeys = ["test-key": "demo-hearth"]
        configuration.secrets.adminTokens = [AdminCredential(token: HeadfulSignInTests.adminToken)]
    }

    @Test("an old session may change its profile but not its password or email, nor delete the account or link; signing in again may")
    func production() async throws {
        try await APIHarness.run(configure: Self.production) { harness, api in
            let user = try await api.signUp(email: "old@example.com")
            let idToken = try #require(user["idToken"])
            harness.clock.advance(milliseconds: 4 * 60_000)
            #expect(try await api.v1("update", ["idToken": idToken, "displayName": "Still me"]).status == 200)
            harness.clock.advance(milliseconds: 2 * 60_000)
            for change: JSONValue in [
                ["idToken": idToken, "password": "a-new-password-1"], ["idToken": idToken, "deleteAttribute": ["PASSWORD"]],
            ] {
                #expect(try await api.v1("update", change).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", "\(change)")
            }
            #expect(try await api.v1("delete", ["idToken": idToken]).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            #expect(try await api.v1("update", ["idToken": idToken, "displayName": "Me again"]).status == 200)

            // A refreshed token keeps its session's sign-in time: refreshing is not signing in.
            let refreshed = try await api.refresh(try #require(user.string("refreshToken")))
            let fresh = try #require(refreshed["id_token"])
            #expect(claims(fresh.stringValue)["auth_time"] == claims(idToken.stringValue)["auth_time"])
            #expect(
                try await api.v1("update", ["idToken": fresh, "password": "a-new-password-1"]).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN"
            )
            // Nor does the owner signing in on another device make this session recent.
            let elsewhere = try await api.v1("signInWithPassword", ["email": "old@example.com", "password": "correct-horse-42"])
            let again = try await api.refresh(try #require(user.string("refreshToken")))
            #expect(claims(again.string("id_token"))["auth_time"] == claims(idToken.stringValue)["auth_time"])

            // The session that just signed in may.
            let recent = try #require(elsewhere["idToken"])
            #expect(try await api.v1("update", ["idToken": recent, "password": "a-new-password-1"]).status == 200)
            let reauthenticated = try await api.v1("signInWithPassword", ["email": "old@example.com", "password": "a-new-password-1"])
            #expect(try await api.v1("delete", ["idToken": try #require(reauthenticated["idToken"])]).status == 200)
        }
    }

    @Test("an anonymous account has nothing to sign in again with: it may upgrade or delete itself at any age")
    func anonymousUpgrade() async throws {
        try await APIHarness.run(configure: Self.production) { harness, api in
            let anonymous = try await api.v1("signUp", ["returnSecureToken": true])
            harness.clock.advance(milliseconds: 30 * 60_000)
            let upgraded = try await api.v1(
                "signUp", ["idToken": try #require(anonymous["idToken"]), "email": "upgraded@example.com", "password": "upgrade-pass-1"])
            #expect(upgraded.status == 200 && upgraded.string("localId") == anonymous.string("localId"), "\(upgraded.json)")
            // Once it can sign in, it is held to the rule like any other account.
            harness.clock.advance(milliseconds: 10 * 60_000)
            #expect(
                try await api.v1("delete", ["idToken": try #require(upgraded["idToken"])]).errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            let another = try await api.v1("signUp", ["returnSecureToken": true])
            harness.clock.advance(milliseconds: 30 * 60_000)
            #expect(try await api.v1("delete", ["idToken": try #require(another["idToken"])]).status == 200)
        }
    }

    @Test("development keeps the emulator's leniency unless recentSignInSeconds turns the rule on")
    func development() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.signUp(email: "dev@example.com")
            harness.clock.advance(milliseconds: 20 * 60_000)
            #expect(try await api.v1("update", ["idToken": try #require(user["idToken"]), "password": "changed-pass-1"]).status == 200)
        }
        try await APIHarness.run(configure: { $0.projects.recentSignInSeconds = 60 }) { harness, api in
            let user = try await api.signUp(email: "dev@example.com")
            harness.clock.advance(milliseconds: 2 * 60_000)
            let linking = try await api.v3(
                "verifyAssertion", FederatedTests.credential("github.com", ["sub": "dev-gh"], idToken: user["idToken"]))
            #expect(linking.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            let verifyNew = try await api.v1(
                "sendOobCode",
                ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": user["idToken"] ?? .null, "newEmail": "new@example.com"])
            #expect(verifyNew.errorCode == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            #expect(
                try await api.v1("update", ["idToken": user["idToken"] ?? .null, "email": "new@example.com"]).errorCode
                    == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
        }
    }
}
