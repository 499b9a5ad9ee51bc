import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

@Suite("signInWithIdp with the development fake IdP")
struct FederatedTests {
    static func credential(_ provider: String, _ claims: JSONValue, idToken: JSONValue? = nil) -> JSONValue {
        let token = claims.text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        var body: [String: JSONValue] = [
            "requestUri": "http://localhost", "postBody": .string("providerId=\(provider)&id_token=\(token)"),
            "returnSecureToken": true, "returnIdpCredential": true,
        ]
        if let idToken { body["idToken"] = idToken }
        return .object(body)
    }

    @Test("sign-in creates the user once; the identity shows in tokens and providerUserInfo")
    func signIn() async throws {
        try await APIHarness.run { _, api in
            let profile: JSONValue = ["sub": "gh-1", "email": "octo@example.com", "email_verified": true, "name": "Octo"]
            let first = try await api.v3("verifyAssertion", Self.credential("github.com", profile))
            #expect(first.status == 200)
            #expect(first["isNewUser"] == true)
            #expect(first.string("providerId") == "github.com")
            #expect(first.string("federatedId") == "gh-1")
            let token = claims(first.string("idToken"))
            #expect(token["firebase"]?["identities"]?["github.com"] == ["gh-1"])
            let user = try await api.lookup(try #require(first.string("idToken")))["users"]?.arrayValue?.first
            #expect(user?["displayName"]?.stringValue == "Octo")
            #expect(user?["providerUserInfo"]?.arrayValue?.first?["rawId"]?.stringValue == "gh-1")
            let second = try await api.v3("verifyAssertion", Self.credential("github.com", profile))
            #expect(second.string("localId") == first.string("localId"))
            #expect(second["isNewUser"] == nil)
            let methods = try await api.v3("createAuthUri", ["identifier": "octo@example.com", "continueUri": "http://a/"])
            #expect(methods["signinMethods"] == ["github.com"])
        }
    }

    @Test("linking an identity another account has: 200 with errorMessage, nothing linked")
    func alreadyLinked() async throws {
        try await APIHarness.run { _, api in
            _ = try await api.v3("verifyAssertion", Self.credential("github.com", ["sub": "gh-2"]))
            let anonymous = try await api.v3("signupNewUser")
            let refused = try await api.v3(
                "verifyAssertion", Self.credential("github.com", ["sub": "gh-2"], idToken: anonymous["idToken"]))
            #expect(refused.status == 200)
            #expect(refused.string("errorMessage") == "FEDERATED_USER_ID_ALREADY_LINKED")
            #expect(refused["idToken"] == nil)
        }
    }

    @Test("one account per email: an unverified provider email asks for confirmation")
    func needConfirmation() async throws {
        try await APIHarness.run { _, api in
            let existing = try await api.signUp(email: "shared@example.com")
            let reply = try await api.v3(
                "verifyAssertion", Self.credential("yahoo.com", ["sub": "y-1", "email": "shared@example.com", "email_verified": false]))
            #expect(reply["needConfirmation"] == true)
            #expect(reply.string("localId") == existing.string("localId"))
            #expect(reply["idToken"] == nil)
        }
    }

    @Test("a provider that vouches for an unverified email takes it over: the password goes, sessions end")
    func verifiedTakeover() async throws {
        try await APIHarness.run { harness, api in
            let squatter = try await api.signUp(email: "owner@example.com")
            let uid = try #require(squatter.string("localId"))
            harness.clock.advance(milliseconds: 2000)
            let owner = try await api.v3(
                "verifyAssertion", Self.credential("google.com", ["sub": "g-9", "email": "owner@example.com", "email_verified": true]))
            #expect(owner.string("localId") == uid)
            #expect(try await api.refresh(try #require(squatter.string("refreshToken"))).status == 400)
            #expect(try await api.lookup(try #require(squatter.string("idToken"))).errorCode == "TOKEN_EXPIRED")
            let user = try await api.lookup(try #require(owner.string("idToken")))["users"]?.arrayValue?.first
            #expect(user?["emailVerified"] == true)
            #expect(user?["passwordHash"] == nil)
            let password = try await api.v3("verifyPassword", ["email": "owner@example.com", "password": "correct-horse-42"])
            #expect(password.errorCode == "INVALID_PASSWORD")
            #expect(try harness.eventTypes(of: uid).contains("account.password_removed"))
            // Already verified: a second provider with the same email changes nothing else.
            let again = try await api.v3(
                "verifyAssertion", Self.credential("github.com", ["sub": "gh-9", "email": "owner@example.com", "email_verified": true]))
            #expect(try await api.refresh(try #require(owner.string("refreshToken"))).status == 200)
            #expect(again.string("localId") == uid)
        }
    }

    @Test("a credential without sub or providerId is a clear 400")
    func badCredential() async throws {
        try await APIHarness.run { _, api in
            #expect(try await api.v3("verifyAssertion", Self.credential("github.com", ["name": "x"])).errorCode == "INVALID_IDP_RESPONSE")
            let noProvider = try await api.v3("verifyAssertion", ["requestUri": "http://localhost", "postBody": "id_token=%7B%7D"])
            #expect(noProvider.errorCode == "INVALID_CREDENTIAL_OR_PROVIDER_ID")
            #expect(try await api.v3("verifyAssertion", ["postBody": "x"]).errorCode == "MISSING_REQUEST_URI")
        }
    }
}
