import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import Testing

@Suite("the Admin SDK's calls (Bearer owner)")
struct AdminTests {
    @Test("create_user, lookup by uid and email, duplicate uid and email, missing user is 200 without users")
    func createAndLookup() async throws {
        try await APIHarness.run { _, api in
            let created = try await api.admin(
                "accounts", ["localId": "ada", "email": "ada@example.com", "password": "correct-horse-42", "displayName": "Ada"])
            #expect(created.status == 200)
            #expect(created.string("localId") == "ada")
            #expect(created["idToken"] == nil)
            let byUid = try await api.admin("accounts:lookup", ["localId": ["ada"]])
            #expect(byUid["users"]?.arrayValue?.first?["displayName"]?.stringValue == "Ada")
            let byEmail = try await api.admin("accounts:lookup", ["email": ["ADA@example.com"]])
            #expect(byEmail["users"]?.arrayValue?.first?["localId"]?.stringValue == "ada")
            let missing = try await api.admin("accounts:lookup", ["localId": ["nobody"]])
            #expect(missing.status == 200)
            #expect(missing["users"] == nil)
            #expect(try await api.admin("accounts", ["localId": "ada"]).errorCode == "DUPLICATE_LOCAL_ID")
            #expect(try await api.admin("accounts", ["email": "ada@example.com"]).errorCode == "EMAIL_EXISTS")
            let signedIn = try await api.v3("verifyPassword", ["email": "ada@example.com", "password": "correct-horse-42"])
            #expect(signedIn.string("localId") == "ada")
        }
    }

    @Test("custom claims reach fresh ID tokens at the top level; reserved names are refused")
    func customClaims() async throws {
        try await APIHarness.run { _, api in
            _ = try await api.admin("accounts", ["localId": "c", "email": "c@example.com", "password": "correct-horse-42"])
            let set = try await api.admin("accounts:update", ["localId": "c", "customAttributes": #"{"role":"editor","tier":2}"#])
            #expect(set.status == 200)
            let token = try await api.v3("verifyPassword", ["email": "c@example.com", "password": "correct-horse-42"])
            #expect(claims(token.string("idToken"))["role"] == "editor")
            #expect(claims(token.string("idToken"))["tier"] == 2)
            let reserved = try await api.admin("accounts:update", ["localId": "c", "customAttributes": #"{"sub":"x"}"#])
            #expect(reserved.errorCode == "FORBIDDEN_CLAIM")
            #expect(try await api.admin("accounts:update", ["localId": "c", "customAttributes": "[1]"]).errorCode == "INVALID_CLAIMS")
            #expect(try await api.admin("accounts:update", ["customAttributes": "{}"]).errorCode == "MISSING_LOCAL_ID")
        }
    }

    @Test("batchGet pages in uid order; batchDelete counts missing uids as deleted")
    func listAndDelete() async throws {
        try await APIHarness.run { _, api in
            for uid in ["u1", "u2", "u3", "u4", "u5"] {
                _ = try await api.admin("accounts", ["localId": .string(uid)])
            }
            var seen: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let query = "?maxResults=2" + (token.map { "&nextPageToken=\($0)" } ?? "")
                let page = try await api.send(
                    .get, APIClient.v1 + "projects/demo-hearth/accounts:batchGet" + query, body: nil, headers: APIClient.admin)
                seen += page["users"]?.arrayValue?.compactMap { $0["localId"]?.stringValue } ?? []
                token = page.string("nextPageToken")
                pages += 1
            } while token != nil && pages < 10
            #expect(seen == ["u1", "u2", "u3", "u4", "u5"])
            let deleted = try await api.admin("accounts:batchDelete", ["localIds": ["u1", "u2", "never"], "force": true])
            #expect(deleted.json == [:])
            let unforced = try await api.admin("accounts:batchDelete", ["localIds": ["u3"]])
            #expect(unforced["errors"]?.arrayValue?.count == 1)
            let left = try await api.admin("accounts:lookup", ["localId": ["u1", "u3"]])
            #expect(left["users"]?.arrayValue?.map { $0["localId"]?.stringValue } == ["u3"])
        }
    }

    @Test("batchCreate imports users with providers; the imported link signs in")
    func importUsers() async throws {
        try await APIHarness.run { _, api in
            let reply = try await api.admin(
                "accounts:batchCreate",
                [
                    "users": [
                        ["localId": "plain", "email": "plain@example.com", "createdAt": 1_600_000_000_000],
                        [
                            "localId": "googler", "email": "g@example.com", "emailVerified": true,
                            "providerUserInfo": [["providerId": "google.com", "rawId": "g-1", "email": "g@example.com"]],
                        ],
                        ["localId": "dupe", "email": "plain@example.com"],
                        ["email": "no-uid@example.com"],
                    ]
                ])
            #expect(reply.status == 200)
            let errors = reply["error"]?.arrayValue ?? []
            #expect(errors.compactMap { $0["index"] } == [2, 3])
            let plain = try await api.admin("accounts:lookup", ["localId": ["plain"]])
            #expect(plain["users"]?.arrayValue?.first?["createdAt"]?.stringValue == "1600000000000")
            let signedIn = try await api.v3("verifyAssertion", FederatedTests.credential("google.com", ["sub": "g-1"]))
            #expect(signedIn.string("localId") == "googler")
        }
    }

    @Test("the emulator wipe deletes every account of the project")
    func wipe() async throws {
        try await APIHarness.run { _, api in
            for index in 0..<3 { _ = try await api.signUp(email: "w\(index)@example.com") }
            let wiped = try await api.send(.delete, "/emulator/v1/projects/demo-hearth/accounts", body: nil, headers: [:])
            #expect(wiped.status == 200)
            let page = try await api.send(
                .get, APIClient.v1 + "projects/demo-hearth/accounts:batchGet", body: nil, headers: APIClient.admin)
            #expect(page["users"] == [])
        }
    }

    @Test("accounts:query counts and pages; createSessionCookie re-issues a verified ID token")
    func queryAndSessionCookie() async throws {
        try await APIHarness.run { _, api in
            for uid in ["q1", "q2", "q3"] { _ = try await api.admin("accounts", ["localId": .string(uid)]) }
            let counted = try await api.admin("accounts:query", ["returnUserInfo": false])
            #expect(counted.json == ["recordsCount": "3"])
            let page = try await api.post(
                APIClient.v1 + "projects/demo-hearth:queryAccounts", ["limit": "2", "offset": "1"], headers: APIClient.admin)
            #expect(page["userInfo"]?.arrayValue?.compactMap { $0["localId"]?.stringValue } == ["q2", "q3"])
            func uids(_ fields: [String: JSONValue]) async throws -> [String]? {
                try await api.admin("accounts:query", .object(fields))["userInfo"]?.arrayValue?.compactMap { $0["localId"]?.stringValue }
            }
            #expect(try await uids(["limit": 1, "offset": 1]) == ["q2"])
            #expect(try await uids(["offset": 1, "order": "DESC"]) == ["q3", "q2"])
            #expect(try await uids(["offset": 3]) == [])
            #expect(try await api.admin("accounts:query", ["expression": []]).status == 400)

            let user = try await api.signUp(email: "cookie@example.com")
            let cookie = try await api.post(
                APIClient.v1 + "projects/demo-hearth:createSessionCookie",
                ["idToken": user["idToken"] ?? .null, "validDuration": "3600"], headers: APIClient.admin)
            let cookieClaims = claims(cookie.string("sessionCookie"))
            #expect(cookieClaims["iss"] == "https://session.firebase.google.com/demo-hearth")
            #expect(cookieClaims["sub"]?.stringValue == user.string("localId"))
            let tooShort = try await api.post(
                APIClient.v1 + "projects/demo-hearth:createSessionCookie",
                ["idToken": user["idToken"] ?? .null, "validDuration": 10], headers: APIClient.admin)
            #expect(tooShort.errorCode == "INVALID_DURATION")
        }
    }
}
