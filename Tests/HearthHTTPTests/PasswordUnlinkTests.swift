import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

/// The `password` provider covers both email+password and email link (Firebase lists them as
/// the sign-in methods `password` and `emailLink` of the one provider id `password`):
/// `deleteProvider: ["password"]` removes both, and with them the account's email, as the Auth
/// Emulator does; `deleteAttribute: ["PASSWORD"]` removes the password only.
@Suite("unlinking the password provider")
struct PasswordUnlinkTests {
    static func unlinkPassword(_ api: APIClient, _ idToken: String?) async throws -> Reply {
        try await api.v3("setAccountInfo", ["idToken": .string(try #require(idToken)), "deleteProvider": ["password"]])
    }

    static func passwordUnlinked(_ harness: APIHarness, _ uid: String?) throws -> Bool {
        let events = try harness.context.store.audit.events(of: .account(APIHarness.project, UserID(try #require(uid))!))
        return events.contains { $0.payload == .providerUnlinked(ProviderUnlinked(providerId: .password)) }
    }

    @Test("a link-only account: password leaves providerUserInfo, the email goes, a new link opens a new account")
    func linkOnly() async throws {
        try await APIHarness.run { harness, api in
            let code = try await EmailLinkTests.sendLink(api, to: "only@example.com")
            let user = try await api.v3("emailLinkSignin", ["email": "only@example.com", "oobCode": .string(code)])
            let unlinked = try await Self.unlinkPassword(api, user.string("idToken"))
            #expect(unlinked.status == 200)
            #expect(unlinked["providerUserInfo"] == [])
            #expect(unlinked["email"] == nil)
            let looked = try await api.lookup(try #require(user.string("idToken")))["users"]?.arrayValue?.first
            #expect(looked?["providerUserInfo"] == [])
            #expect(looked?["email"] == nil)
            #expect(looked?["emailLinkSignin"] == nil || looked?["emailLinkSignin"] == false)
            #expect(try Self.passwordUnlinked(harness, user.string("localId")))
            let methods = try await api.v3("createAuthUri", ["identifier": "only@example.com", "continueUri": "http://a/"])
            #expect(methods["signinMethods"] == nil || methods["signinMethods"] == [])
            let again = try await api.v3(
                "emailLinkSignin",
                ["email": "only@example.com", "oobCode": .string(try await EmailLinkTests.sendLink(api, to: "only@example.com"))])
            #expect(again["isNewUser"] == true)
            #expect(again.string("localId") != user.string("localId"))
        }
    }

    @Test("email+password and email link on one account: both go; other providers stay")
    func both() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.signUp(email: "both@example.com")
            let linked = try await api.v3(
                "verifyAssertion", FederatedTests.credential("github.com", ["sub": "gh-both"], idToken: user["idToken"]))
            #expect(linked.status == 200)
            // The owner proves the email by link: the account now has a link sign-in (GitHub,
            // linked while unverified, went; this one links it again).
            let code = try await EmailLinkTests.sendLink(api, to: "both@example.com")
            let viaLink = try await api.v3("emailLinkSignin", ["email": "both@example.com", "oobCode": .string(code)])
            let relinked = try await api.v3(
                "verifyAssertion", FederatedTests.credential("github.com", ["sub": "gh-both"], idToken: viaLink["idToken"]))
            #expect(relinked.status == 200)
            let withPassword = try await api.v3(
                "setAccountInfo", ["idToken": relinked["idToken"] ?? .null, "password": "correct-horse-42", "returnSecureToken": true])
            #expect(withPassword.status == 200)
            let idToken = withPassword.string("idToken") ?? relinked.string("idToken")
            let unlinked = try await Self.unlinkPassword(api, idToken)
            #expect(unlinked["providerUserInfo"]?.arrayValue?.map { $0["providerId"] } == ["github.com"])
            #expect(unlinked["passwordHash"] == nil)
            #expect(unlinked["email"] == nil)
            #expect(try Self.passwordUnlinked(harness, user.string("localId")))
            let password = try await api.v3("verifyPassword", ["email": "both@example.com", "password": "correct-horse-42"])
            #expect(password.errorCode == "EMAIL_NOT_FOUND")
            let github = try await api.v3("verifyAssertion", FederatedTests.credential("github.com", ["sub": "gh-both"]))
            #expect(github.string("localId") == user.string("localId"))
        }
    }

    @Test("deleteAttribute PASSWORD removes the password only: the email and email link stay")
    func passwordAttribute() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "attr@example.com")
            let removed = try await api.v3("setAccountInfo", ["idToken": user["idToken"] ?? .null, "deleteAttribute": ["PASSWORD"]])
            #expect(removed.status == 200)
            #expect(removed.string("email") == "attr@example.com")
            #expect(removed["passwordHash"] == nil)
        }
    }

    @Test("unlinking password from an account that has none changes nothing")
    func nothingToUnlink() async throws {
        try await APIHarness.run { harness, api in
            let user = try await api.v3(
                "verifyAssertion", FederatedTests.credential("github.com", ["sub": "gh-none", "email": "none@example.com"]))
            let uid = try #require(user.string("localId"))
            let before = try harness.eventTypes(of: uid)
            let unlinked = try await Self.unlinkPassword(api, user.string("idToken"))
            #expect(unlinked.status == 200)
            #expect(try harness.eventTypes(of: uid) == before)
        }
    }
}
