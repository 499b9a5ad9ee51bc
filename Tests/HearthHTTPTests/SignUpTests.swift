import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

@Suite("signUp and password sign-in")
struct SignUpTests {
    @Test("anonymous sign-up: iOS token fields, anonymous claims, one user on lookup")
    func anonymous() async throws {
        try await APIHarness.run { _, api in
            let reply = try await api.v3("signupNewUser", ["returnSecureToken": true, "clientType": "CLIENT_TYPE_IOS"])
            #expect(reply.status == 200)
            #expect(reply.string("expiresIn") == "3600")
            let uid = try #require(reply.string("localId"))
            let token = claims(reply.string("idToken"))
            #expect(token["sub"]?.stringValue == uid)
            #expect(token["provider_id"]?.stringValue == "anonymous")
            #expect(token["firebase"]?["sign_in_provider"]?.stringValue == "anonymous")
            #expect(token["iss"]?.stringValue == "https://securetoken.google.com/demo-hearth")
            #expect(token["aud"]?.stringValue == "demo-hearth")
            let users = try await api.lookup(try #require(reply.string("idToken")))["users"]?.arrayValue
            #expect(users?.count == 1)
            #expect(users?.first?["localId"]?.stringValue == uid)
        }
    }

    @Test("new uids carry the clock's time: accounts created later sort after earlier ones")
    func uidsSortByCreation() async throws {
        try await APIHarness.run { harness, api in
            var uids: [String] = []
            for _ in 0..<5 {
                uids.append(try #require(try await api.v1("signUp", ["returnSecureToken": true]).string("localId")))
                harness.clock.advance(milliseconds: 1)
            }
            #expect(uids == uids.sorted())
            #expect(Set(uids.map { $0.prefix(8) }).count == 5)
            #expect(uids.first?.prefix(8) == UserIDMinter.mint(at: harness.clock.now() - 5).rawValue.prefix(8))
        }
    }

    @Test("email+password: sign up on v1, sign in on v3, same account; errors in the envelope")
    func emailPassword() async throws {
        try await APIHarness.run { _, api in
            let created = try await api.signUp(email: "Ada@Example.com")
            #expect(created.status == 200)
            #expect(created.string("email") == "ada@example.com")
            let signedIn = try await api.v3("verifyPassword", ["email": "ada@example.com", "password": "correct-horse-42"])
            #expect(signedIn.status == 200)
            #expect(signedIn.string("localId") == created.string("localId"))
            #expect(claims(signedIn.string("idToken"))["firebase"]?["sign_in_provider"]?.stringValue == "password")

            let user = try await api.lookup(try #require(signedIn.string("idToken")))["users"]?.arrayValue?.first
            #expect(user?["passwordHash"]?.stringValue?.isEmpty == false)
            #expect(user?["emailVerified"] == false)
            #expect(user?["lastLoginAt"]?.stringValue != nil)
            let loggedIn = try #require(user?["lastLoginAt"]?.stringValue.flatMap { Int64($0) })
            #expect(user?["lastRefreshAt"]?.stringValue == Timestamp.iso8601(milliseconds: loggedIn))
            #expect(user?["providerUserInfo"]?.arrayValue?.first?["federatedId"]?.stringValue == "ada@example.com")

            let duplicate = try await api.signUp(email: "ada@example.com")
            #expect(duplicate.status == 400)
            #expect(duplicate.errorCode == "EMAIL_EXISTS")
            #expect(duplicate["error"]?["code"] == 400)
            #expect(duplicate["error"]?["errors"]?.arrayValue?.first?["reason"]?.stringValue == "invalid")

            #expect(try await api.signUp(email: "weak@example.com", password: "12345").errorCode == "WEAK_PASSWORD")
            #expect(try await api.signUp(email: "not-an-email").errorCode == "INVALID_EMAIL")
            let wrong = try await api.v3("verifyPassword", ["email": "ada@example.com", "password": "wrong-password"])
            #expect(wrong.errorCode == "INVALID_PASSWORD")
            let unknown = try await api.v3("verifyPassword", ["email": "nobody@example.com", "password": "whatever1"])
            #expect(unknown.errorCode == "EMAIL_NOT_FOUND")
            #expect(try await api.v3("verifyPassword", ["email": "ada@example.com"]).errorCode == "MISSING_PASSWORD")
        }
    }

    @Test("an anonymous user links email+password with signUp + idToken and keeps its uid")
    func upgradeAnonymous() async throws {
        try await APIHarness.run { _, api in
            let anonymous = try await api.v3("signupNewUser")
            let uid = try #require(anonymous.string("localId"))
            let linked = try await api.v3(
                "signupNewUser",
                ["email": "up@example.com", "password": "correct-horse-42", "idToken": anonymous["idToken"] ?? .null])
            #expect(linked.status == 200)
            #expect(linked.string("localId") == uid)
            #expect(claims(linked.string("idToken"))["firebase"]?["sign_in_provider"]?.stringValue == "password")
            let signedIn = try await api.v3("verifyPassword", ["email": "up@example.com", "password": "correct-horse-42"])
            #expect(signedIn.string("localId") == uid)

            let other = try await api.v3("signupNewUser")
            let taken = try await api.v3(
                "signupNewUser",
                ["email": "up@example.com", "password": "correct-horse-42", "idToken": other["idToken"] ?? .null])
            #expect(taken.errorCode == "EMAIL_EXISTS")
        }
    }

    @Test("createAuthUri lists password, nothing for unknown emails")
    func signInMethods() async throws {
        try await APIHarness.run { _, api in
            _ = try await api.signUp(email: "methods@example.com")
            let known = try await api.v3("createAuthUri", ["identifier": "methods@example.com", "continueUri": "http://www.google.com/"])
            #expect(known["signinMethods"] == ["password"])
            #expect(known["registered"] == true)
            let unknown = try await api.v3("createAuthUri", ["identifier": "x@example.com", "continueUri": "http://www.google.com/"])
            #expect(unknown["signinMethods"] == [])
            #expect(unknown["registered"] == false)
            #expect(try await api.v3("createAuthUri", ["continueUri": "http://a/"]).errorCode == "MISSING_IDENTIFIER")
        }
    }
}
