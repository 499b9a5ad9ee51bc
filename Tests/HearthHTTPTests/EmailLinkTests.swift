import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

@Suite("email-link (passwordless) sign-in")
struct EmailLinkTests {
    /// Sends a sign-in link the way iOS does and returns the code the outbox lists for `email`.
    static func sendLink(_ api: APIClient, to email: String) async throws -> String {
        let sent = try await api.v3(
            "getOobConfirmationCode",
            [
                "requestType": "EMAIL_SIGNIN", "email": .string(email), "canHandleCodeInApp": true,
                "continueUrl": "http://localhost/finishSignIn?cartId=1234", "iOSBundleId": "dev.hearth",
            ])
        #expect(sent.status == 200)
        let listed = try await api.send(.get, "/emulator/v1/projects/demo-hearth/oobCodes", body: nil, headers: [:])
        let entry = try #require(listed["oobCodes"]?.arrayValue?.last { $0["email"]?.stringValue == email })
        let link = try #require(entry["oobLink"]?.stringValue)
        let code = try #require(entry["oobCode"]?.stringValue)
        #expect(link.contains("mode=signIn&"))
        #expect(link.contains("oobCode=\(code)"))
        #expect(link.contains("continueUrl=http%3A%2F%2Flocalhost%2FfinishSignIn%3FcartId%3D1234"))
        return code
    }

    @Test("a link creates a verified user; the code is single-use and bound to its email")
    func signIn() async throws {
        try await APIHarness.run { _, api in
            let code = try await Self.sendLink(api, to: "link@example.com")
            let other = try await api.v3("emailLinkSignin", ["email": "intruder@example.com", "oobCode": .string(code)])
            #expect(other.errorCode == "INVALID_EMAIL")
            let signedIn = try await api.v3("emailLinkSignin", ["email": "link@example.com", "oobCode": .string(code)])
            #expect(signedIn.status == 200)
            #expect(signedIn["isNewUser"] == true)
            let user = try await api.lookup(try #require(signedIn.string("idToken")))["users"]?.arrayValue?.first
            #expect(user?["emailVerified"] == true)
            #expect(user?["emailLinkSignin"] == true)
            let reused = try await api.v3("emailLinkSignin", ["email": "link@example.com", "oobCode": .string(code)])
            #expect(reused.errorCode == "INVALID_OOB_CODE")
            let methods = try await api.v3("createAuthUri", ["identifier": "link@example.com", "continueUri": "http://a/"])
            #expect(methods["signinMethods"] == ["emailLink"])
            // Consumed codes leave the listing.
            let listed = try await api.send(.get, "/emulator/v1/projects/demo-hearth/oobCodes", body: nil, headers: [:])
            #expect(listed["oobCodes"] == [])
        }
    }

    @Test("an email link evicts an impostor: every unverified sign-in method removed (password, providers), earlier sessions revoked")
    func takeover() async throws {
        try await APIHarness.run { harness, api in
            let impostor = try await api.signUp(email: "victim@example.com")
            // The impostor links a GitHub account of theirs while the email is unverified.
            let linked = try await api.v3(
                "verifyAssertion",
                FederatedTests.credential("github.com", ["sub": "impostor-gh"], idToken: impostor["idToken"]))
            #expect(linked.status == 200 && linked.string("localId") == impostor.string("localId"), "\(linked.json)")
            harness.clock.advance(milliseconds: 1500)
            let code = try await Self.sendLink(api, to: "victim@example.com")
            let owner = try await api.v3("emailLinkSignin", ["email": "victim@example.com", "oobCode": .string(code)])
            #expect(owner.status == 200)
            #expect(owner.string("localId") == impostor.string("localId"))
            let user = try await api.lookup(try #require(owner.string("idToken")))["users"]?.arrayValue?.first
            #expect(user?["passwordHash"] == nil)
            #expect(user?["emailVerified"] == true)
            #expect(try await api.lookup(try #require(impostor.string("idToken"))).errorCode == "TOKEN_EXPIRED")
            #expect(try await api.refresh(try #require(impostor.string("refreshToken"))).status == 400)
            #expect(try await api.refresh(try #require(owner.string("refreshToken"))).status == 200)
            let password = try await api.v3("verifyPassword", ["email": "victim@example.com", "password": "correct-horse-42"])
            #expect(password.errorCode == "INVALID_PASSWORD")

            #expect(user?["providerUserInfo"]?.arrayValue?.contains { $0["providerId"] == "github.com" } == false)
            // The impostor's GitHub no longer opens the owner's account.
            let gitHub = try await api.v3("verifyAssertion", FederatedTests.credential("github.com", ["sub": "impostor-gh"]))
            #expect(gitHub.string("localId") != impostor.string("localId"))

            // The ledger says what happened, as its own events, with why.
            let uid = try #require(impostor.string("localId"))
            let events = try harness.context.store.audit.events(of: .account(APIHarness.project, UserID(uid)!))
            let payloads = events.map(\.payload)
            #expect(payloads.contains(.passwordRemoved(PasswordRemoved(reason: .emailLinkVerified))))
            #expect(payloads.contains(.providerUnlinked(ProviderUnlinked(providerId: "github.com", reason: .emailLinkVerified))))
            #expect(
                payloads.contains { if case .sessionsRevoked(let revoked) = $0 { revoked.reason == .emailLinkVerified } else { false } })
        }
    }

    @Test("an email link links to an anonymous user, and refuses an email another account owns")
    func linking() async throws {
        try await APIHarness.run { _, api in
            let anonymous = try await api.v3("signupNewUser")
            let code = try await Self.sendLink(api, to: "anon@example.com")
            let linked = try await api.v3(
                "emailLinkSignin", ["email": "anon@example.com", "oobCode": .string(code), "idToken": anonymous["idToken"] ?? .null])
            #expect(linked.string("localId") == anonymous.string("localId"))
            let other = try await api.v3("signupNewUser")
            let second = try await Self.sendLink(api, to: "anon@example.com")
            let refused = try await api.v3(
                "emailLinkSignin", ["email": "anon@example.com", "oobCode": .string(second), "idToken": other["idToken"] ?? .null])
            #expect(refused.errorCode == "EMAIL_EXISTS")
        }
    }

    @Test("a continue URL outside the authorized domains is refused for apps, allowed for admins")
    func authorizedDomains() async throws {
        try await APIHarness.run { _, api in
            let body: JSONValue = [
                "requestType": "EMAIL_SIGNIN", "email": "d@example.com", "continueUrl": "https://evil.example/x",
                "canHandleCodeInApp": true,
            ]
            #expect(try await api.v3("getOobConfirmationCode", body).errorCode == "UNAUTHORIZED_DOMAIN")
            var admin = body.objectValue!
            admin["returnOobLink"] = true
            let reply = try await api.admin("accounts:sendOobCode", .object(admin))
            #expect(reply.status == 200)
            #expect(reply.string("oobLink")?.contains("continueUrl=https%3A%2F%2Fevil.example%2Fx") == true)
            let notAdmin = try await api.v3("getOobConfirmationCode", .object(admin))
            #expect(notAdmin.errorCode == "INSUFFICIENT_PERMISSION")
        }
    }
}
