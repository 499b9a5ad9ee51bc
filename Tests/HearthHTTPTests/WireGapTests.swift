import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import Testing

/// Firebase's and the Auth Emulator's wire behaviour in the corners a held-out suite probes:
/// validation order, batchCreate's request-level and per-user errors, signInWithIdp details,
/// linkProviderUserInfo, targetProjectId and the owner credentials.
@Suite("wire details")
struct WireGapTests {
    @Test("validation order: an absent email is MISSING_EMAIL, an empty one INVALID_EMAIL")
    func emptyStrings() async throws {
        try await APIHarness.run { _, api in
            let answers = [
                try await api.v1("signInWithPassword", ["password": "x"]).errorCode,
                try await api.v1("signInWithPassword", ["email": "", "password": "x"]).errorCode,
                try await api.v1("signUp", ["email": "", "password": ""]).errorCode,
                try await api.v1("signUp", ["email": "", "password": "secret1"]).errorCode,
                try await api.v1("signUp", ["email": "a@example.com"]).errorCode,
                try await api.v1("signUp", [:]).errorCode,
            ]
            #expect(answers == ["MISSING_EMAIL", "INVALID_EMAIL", "INVALID_EMAIL", "MISSING_EMAIL", "MISSING_PASSWORD", nil])
        }
    }

    @Test("targetProjectId needs admin credentials; the emulator's owner credentials are accepted in development")
    func credentials() async throws {
        try await APIHarness.run { _, api in
            let named = try await api.v1("lookup", ["idToken": "x", "targetProjectId": "demo-hearth"])
            #expect(
                named.json["error"]?["message"] == "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
            for bearer in ["Bearer owner", "BEARER OWNER", "Bearer ya29.a0AfH6SMBx-an-access-token"] {
                let reply = try await api.post(
                    APIClient.v1 + "projects/demo-hearth/accounts:lookup", ["localId": ["nobody"]],
                    headers: [.authorization: bearer, .contentType: "application/json"])
                #expect(reply.status == 200, "\(bearer)")
            }
            let stranger = try await api.post(
                APIClient.v1 + "projects/demo-hearth/accounts:lookup", ["localId": ["nobody"]],
                headers: [.authorization: "Bearer not-a-token", .contentType: "application/json"])
            #expect(stranger.status == 401)
        }
    }

    @Test("batchCreate: request-level duplicates, Firebase's per-user messages, raw passwords, hash-less users")
    func batchCreate() async throws {
        try await APIHarness.run { _, api in
            let duplicateIds = try await api.admin("accounts:batchCreate", ["users": [["localId": "a"], ["localId": "a"]]])
            #expect(duplicateIds.json["error"]?["message"] == "DUPLICATE_LOCAL_ID : a")
            let duplicateRaw = try await api.admin(
                "accounts:batchCreate",
                [
                    "sanityCheck": true,
                    "users": [
                        ["localId": "r1", "providerUserInfo": [["providerId": "google.com", "rawId": "g1"]]],
                        ["localId": "r2", "providerUserInfo": [["providerId": "google.com", "rawId": "g1"]]],
                    ],
                ])
            #expect(duplicateRaw.json["error"]?["message"] == "DUPLICATE_RAW_ID : Provider id(google.com), Raw id(g1)")
            let duplicateEmail = try await api.admin(
                "accounts:batchCreate",
                [
                    "sanityCheck": true,
                    "users": [["localId": "e1", "email": "e@example.com"], ["localId": "e2", "email": "e@example.com"]],
                ])
            #expect(duplicateEmail.json["error"]?["message"] == "DUPLICATE_EMAIL : e@example.com")

            let mixed = try await api.admin(
                "accounts:batchCreate",
                [
                    "users": [
                        ["localId": "claims", "customAttributes": #"{"sub":"x"}"#],
                        ["localId": "big", "customAttributes": .string("{\"a\":\"" + String(repeating: "x", count: 1000) + "\"}")],
                        ["localId": "raw", "email": "raw@example.com", "rawPassword": "raw-password-1"],
                        [
                            "localId": "bare", "email": "bare@example.com",
                            "providerUserInfo": [["providerId": "github.com", "rawId": "gh-9"]],
                        ],
                    ]
                ])
            let errors = mixed["error"]?.arrayValue?.map { "\($0["index"]?.text ?? ""): \($0["message"]?.stringValue ?? "")" }
            #expect(errors == ["0: Custom claims provided include a reserved claim.", "1: Custom claims provided are too large."])
            // A raw password is hashed on import; a hash-less user has no password to sign in with.
            #expect(try await api.v1("signInWithPassword", ["email": "raw@example.com", "password": "raw-password-1"]).status == 200)
            #expect(
                try await api.v1("signInWithPassword", ["email": "bare@example.com", "password": "anything-1"]).errorCode
                    == "INVALID_PASSWORD")
            let methods = try await api.v1("createAuthUri", ["identifier": "bare@example.com", "continueUri": "http://localhost/"])
            #expect(methods["signinMethods"] == ["github.com"])
        }
    }

    @Test("batchCreate with allowOverwrite replaces the whole record, keeping only the uid, and ends its sessions")
    func overwrite() async throws {
        try await APIHarness.run { harness, api in
            let created = try await api.admin(
                "accounts:batchCreate",
                [
                    "users": [
                        [
                            "localId": "over", "email": "over@example.com", "displayName": "Old", "rawPassword": "old-password-1",
                            "providerUserInfo": [["providerId": "google.com", "rawId": "g-over"]],
                        ]
                    ]
                ])
            #expect(created["error"] == [])
            let session = try await api.v1("signInWithPassword", ["email": "over@example.com", "password": "old-password-1"])
            harness.clock.advance(milliseconds: 1500)
            let refused = try await api.admin("accounts:batchCreate", ["users": [["localId": "over", "email": "new@example.com"]]])
            #expect(refused["error"]?.arrayValue?.first?["message"] == "localId belongs to an existing account - can not overwrite.")
            let replaced = try await api.admin(
                "accounts:batchCreate",
                [
                    "allowOverwrite": true,
                    "users": [["localId": "over", "email": "new@example.com"], ["localId": "over", "email": "newer@example.com"]],
                ])
            #expect(replaced["error"] == [])
            let user = try await api.admin("accounts:lookup", ["localId": ["over"]])["users"]?.arrayValue?.first
            #expect(user?["email"] == "newer@example.com" && user?["displayName"] == nil && user?["passwordHash"] == nil)
            #expect(user?["providerUserInfo"] == [])
            #expect(try await api.lookup(try #require(session.string("idToken"))).status == 400)
            // What the old record held is free again.
            let google = try await api.v3("verifyAssertion", FederatedTests.credential("google.com", ["sub": "g-over"]))
            #expect(google["isNewUser"] == true)
        }
    }

    @Test("signInWithIdp: Google's name parts, unsigned Google JWTs, relinking one's own credential, SAML responses checked")
    func signInWithIdp() async throws {
        try await APIHarness.run { _, api in
            let claims: JSONValue = [
                "sub": "g-7", "email": "gina@example.com", "email_verified": true, "name": "Gina Ray", "given_name": "Gina",
                "family_name": "Ray", "picture": "https://img.example/g.png",
            ]
            let signedIn = try await api.v1("signInWithIdp", FederatedTests.credential("google.com", claims))
            #expect(signedIn.string("firstName") == "Gina" && signedIn.string("lastName") == "Ray")
            #expect(signedIn.string("photoUrl") == "https://img.example/g.png" && signedIn.string("fullName") == "Gina Ray")

            // Google's JWT as the emulator takes it: unsigned (alg none, empty signature).
            let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
            let payload = Base64URL.encode(JSONValue.object(["sub": "g-8", "email": "jwt@example.com"]).encoded())
            let unsigned = try await api.v1(
                "signInWithIdp",
                [
                    "requestUri": "http://localhost", "postBody": .string("providerId=google.com&id_token=\(header).\(payload)."),
                    "returnSecureToken": true,
                ])
            #expect(unsigned.status == 200 && unsigned.string("federatedId") == "https://accounts.google.com/g-8")

            let relink = try await api.v1(
                "signInWithIdp", FederatedTests.credential("google.com", ["sub": "g-7"], idToken: signedIn["idToken"]))
            #expect(relink.string("errorMessage") == "FEDERATED_USER_ID_ALREADY_LINKED" && relink["idToken"] == nil)

            func saml(_ response: String) async throws -> Reply {
                let encoded = response.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return try await api.v1(
                    "signInWithIdp",
                    [
                        "requestUri": "http://localhost",
                        "postBody": .string("providerId=saml.corp&id_token=%7B%22sub%22%3A%22s-1%22%7D&SAMLResponse=\(encoded)"),
                        "returnSecureToken": true,
                    ])
            }
            #expect(try await saml("{}").json["error"]?["message"] == "INVALID_IDP_RESPONSE ((Missing assertion in SAMLResponse.))")
            #expect(
                try await saml(#"{"assertion":{}}"#).json["error"]?["message"]
                    == "INVALID_IDP_RESPONSE ((Missing assertion.subject in SAMLResponse.))")
            #expect(
                try await saml(#"{"assertion":{"subject":{}}}"#).json["error"]?["message"]
                    == "INVALID_IDP_RESPONSE ((Missing assertion.subject.nameId in SAMLResponse.))")
            #expect(try await saml("not json").status == 400)
            let accepted = try await saml(#"{"assertion":{"subject":{"nameId":"Sam@Corp.example"},"attributeStatements":{"team":"blue"}}}"#)
            #expect(accepted.status == 200 && accepted.string("email") == "sam@corp.example" && accepted["emailVerified"] == true)
            #expect(accepted.string("rawUserInfo") == #"{"team":"blue"}"#)
        }
    }

    @Test("the first email change records the address before it (initialEmail); later changes keep it")
    func initialEmail() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "first@example.com")
            let uid = try #require(user["localId"])
            _ = try await api.admin("accounts:update", ["localId": uid, "email": "second@example.com"])
            _ = try await api.admin("accounts:update", ["localId": uid, "email": "third@example.com"])
            let record = try await api.admin("accounts:lookup", ["localId": [uid]])["users"]?.arrayValue?.first
            #expect(record?["email"] == "third@example.com" && record?["initialEmail"] == "first@example.com")
            let other = try await api.signUp(email: "never-changed@example.com")
            let unchanged = try await api.admin("accounts:lookup", ["localId": [other["localId"] ?? .null]])["users"]?.arrayValue?.first
            #expect(unchanged?["initialEmail"] == nil)
        }
    }

    @Test("accounts:update links a provider (linkProviderUserInfo), checking provider id then raw id")
    func linkProviderUserInfo() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "linker@example.com")
            let uid = try #require(user["localId"])
            #expect(
                try await api.admin("accounts:update", ["localId": uid, "linkProviderUserInfo": ["rawId": "x"]]).errorCode
                    == "MISSING_PROVIDER_ID")
            #expect(
                try await api.admin("accounts:update", ["localId": uid, "linkProviderUserInfo": ["providerId": "github.com"]]).errorCode
                    == "MISSING_RAW_ID")
            let linked = try await api.admin(
                "accounts:update",
                [
                    "localId": uid,
                    "linkProviderUserInfo": [
                        "providerId": "github.com", "rawId": "gh-42", "displayName": "Octo", "email": "octo@example.com",
                    ],
                ])
            let entry = linked["providerUserInfo"]?.arrayValue?.first { $0["providerId"] == "github.com" }
            #expect(entry?["rawId"] == "gh-42" && entry?["displayName"] == "Octo")
            // That identity now signs in to this account.
            let viaGitHub = try await api.v1("signInWithIdp", FederatedTests.credential("github.com", ["sub": "gh-42"]))
            #expect(viaGitHub["localId"] == uid)
        }
    }

    @Test("the legacy relyingparty/uploadAccount and downloadAccount: batchCreate and batchGet, the project in the body")
    func legacyUploadAndDownload() async throws {
        try await APIHarness.run { _, api in
            let uploaded = try await api.post(
                APIClient.v3 + "uploadAccount",
                [
                    "targetProjectId": "demo-hearth",
                    "users": [["localId": "legacy-1", "email": "l1@example.com"], ["localId": "legacy-2", "email": "l2@example.com"]],
                ], headers: APIClient.admin)
            #expect(uploaded.status == 200, "\(uploaded.json)")
            #expect(uploaded["kind"] == "identitytoolkit#UploadAccountResponse")
            #expect(uploaded["error"] == [])
            let first = try await api.post(
                APIClient.v3 + "downloadAccount", ["targetProjectId": "demo-hearth", "maxResults": 1], headers: APIClient.admin)
            #expect(first["kind"] == "identitytoolkit#DownloadAccountResponse")
            #expect(first["users"]?.arrayValue?.map { $0["localId"] } == ["legacy-1"])
            let token = try #require(first["nextPageToken"])
            let second = try await api.post(
                APIClient.v3 + "downloadAccount", ["targetProjectId": "demo-hearth", "maxResults": 1, "nextPageToken": token],
                headers: APIClient.admin)
            #expect(second["users"]?.arrayValue?.map { $0["localId"] } == ["legacy-2"])
            // An app's API key lists no one.
            #expect(try await api.v3("downloadAccount", [:]).errorCode == "INSUFFICIENT_PERMISSION")
            #expect(try await api.v3("uploadAccount", ["users": [["localId": "x"]]]).errorCode == "INSUFFICIENT_PERMISSION")
        }
    }
}
