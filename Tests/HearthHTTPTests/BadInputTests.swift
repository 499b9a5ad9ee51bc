import HTTPTypes
import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting
import HearthWire
import NIOCore
import PropertyBased
import Testing

@Suite("bad input: a 4xx in the Firebase envelope, never a 5xx")
struct BadInputTests {
    static let endpoints = [
        "signupNewUser", "verifyPassword", "getAccountInfo", "setAccountInfo", "deleteAccount", "createAuthUri",
        "getOobConfirmationCode", "emailLinkSignin", "verifyAssertion", "verifyCustomToken",
    ]

    func expectEnvelope(_ reply: Reply, status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == status, sourceLocation: sourceLocation)
        #expect(reply["error"]?["code"] == .int(Int64(status)), sourceLocation: sourceLocation)
        #expect(reply["error"]?["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test("malformed bodies, wrong types, missing key, bad bearer, unknown routes, oversized bodies")
    func envelopes() async throws {
        try await APIHarness.run { _, api in
            let uri = APIClient.v3 + "signupNewUser?key=k"
            expectEnvelope(try await api.send(.post, uri, body: ByteBuffer(string: "{not json"), headers: APIClient.json), status: 400)
            expectEnvelope(
                try await api.send(.post, uri, body: ByteBuffer(bytes: [0x7b, 0xff, 0xfe, 0x7d]), headers: APIClient.json), status: 400)
            expectEnvelope(try await api.send(.post, uri, body: ByteBuffer(string: "[1,2]"), headers: APIClient.json), status: 400)
            let wrongType = try await api.v3("signupNewUser", ["email": ["a", "b"], "password": "x"])
            expectEnvelope(wrongType, status: 400)
            #expect(wrongType["error"]?["status"] == "INVALID_ARGUMENT")
            expectEnvelope(try await api.v3("verifyPassword", ["email": true]), status: 400)
            let huge = ByteBuffer(repeating: UInt8(ascii: "a"), count: 2 << 20)
            expectEnvelope(try await api.send(.post, uri, body: huge, headers: APIClient.json), status: 413)
            // Unknown fields are ignored, as by Firebase.
            #expect(try await api.v3("signupNewUser", ["unknownField": ["deep": [1, 2]]]).status == 200)
            let noKey = try await api.post(APIClient.v3 + "signupNewUser", [:])
            expectEnvelope(noKey, status: 403)
            let badBearer = try await api.post(
                APIClient.v1 + "accounts:lookup", [:], headers: [.authorization: "Bearer nope", .contentType: "application/json"])
            expectEnvelope(badBearer, status: 401)
            let pathProject = try await api.post(APIClient.v1 + "projects/demo-hearth/accounts:lookup?key=k", [:])
            #expect(pathProject.errorCode == "INSUFFICIENT_PERMISSION")
            expectEnvelope(try await api.v3("noSuchMethod"), status: 404)
            expectEnvelope(try await api.send(.get, "/nowhere", body: nil, headers: [:]), status: 404)
            expectEnvelope(try await api.v3("getAccountInfo", ["idToken": "a.b.c"]), status: 400)
            expectEnvelope(try await api.v3("getAccountInfo", ["idToken": .string(String(repeating: "x", count: 100_000))]), status: 400)
            // Custom tokens: wrong types, huge values, payloads that are not what they claim.
            let longUid = CustomTokenTests.unsigned(CustomTokenTests.payload(uid: .string(String(repeating: "u", count: 129))))
            let controlUid = CustomTokenTests.unsigned(CustomTokenTests.payload(uid: "a\u{01}b"))
            let arrayPayload = "eyJhbGciOiJub25lIn0." + Base64URL.encode(Array("[1,2]".utf8)) + "."
            for token: JSONValue in [
                .int(5), ["a"], .string(String(repeating: "a.", count: 200_000)), .string(longUid), .string(controlUid),
                .string(arrayPayload), "{\"uid\": {\"nested\": true}}",
            ] {
                expectEnvelope(try await api.v3("verifyCustomToken", ["token": token]), status: 400)
            }
        }
    }

    @Test("values past a limit: a 400 (or the user's import error), never a trap, a 500 or a stored oversized value")
    func limits() async throws {
        try await APIHarness.run { _, api in
            let user = try await api.signUp(email: "limits@example.com")
            let idToken = user["idToken"] ?? .null
            // An offset near Int64.max once overflowed offset + limit and trapped.
            let query = try await api.admin("accounts:query", ["offset": "9223372036854775807", "limit": 1])
            #expect(query.status == 200)
            #expect(query["userInfo"] == [])
            // Keys built from ids must stay under LMDB's 511 bytes: 128 four-byte characters are refused.
            let emoji = String(repeating: "😀", count: 128)
            expectEnvelope(try await api.admin("accounts", ["localId": .string(emoji)]), status: 400)
            expectEnvelope(try await api.v1("signInWithCustomToken", ["token": .string(#"{"uid":"\#(emoji)"}"#)]), status: 400)
            let longSub = #"{"sub":"\#(String(repeating: "s", count: 300))"}"#
            let idp = try await api.v1(
                "signInWithIdp",
                [
                    "requestUri": "http://localhost", "postBody": .string("providerId=google.com&id_token=\(longSub)"),
                    "returnSecureToken": true,
                ])
            expectEnvelope(idp, status: 400)
            let imported = try await api.admin(
                "accounts:batchCreate",
                [
                    "users": [
                        [
                            "localId": "fed",
                            "providerUserInfo": [["providerId": "google.com", "rawId": .string(String(repeating: "r", count: 300))]],
                        ]
                    ]
                ])
            #expect(imported["error"]?.arrayValue?.count == 1)
            // Profile text ends up in every ID token; claims are counted in bytes, not characters.
            expectEnvelope(
                try await api.v1("update", ["idToken": idToken, "displayName": .string(String(repeating: "x", count: 1025))]), status: 400)
            expectEnvelope(
                try await api.v1("update", ["idToken": idToken, "photoUrl": .string(String(repeating: "x", count: 2049))]), status: 400)
            let marks = "a" + String(repeating: "\u{301}", count: 600)
            #expect(marks.count == 1)
            let claims = try await api.admin(
                "accounts:update", ["localId": user["localId"] ?? .null, "customAttributes": .string(#"{"k":"\#(marks)"}"#)])
            #expect(claims.errorCode == "CLAIMS_TOO_LARGE")
            for phone in ["+①②③④⑤", "+١٢٣٤٥٦"] {
                expectEnvelope(
                    try await api.admin("accounts:update", ["localId": user["localId"] ?? .null, "phoneNumber": .string(phone)]),
                    status: 400)
            }
            expectEnvelope(try await api.v1("signUp", ["email": "two words@example.com", "password": "correct-horse-42"]), status: 400)
            // Revocation only moves forward: a validSince far ahead would lock the account out for good.
            let ahead = try await api.admin("accounts:update", ["localId": user["localId"] ?? .null, "validSince": "9223372036854775807"])
            expectEnvelope(ahead, status: 400)
            let future = try await api.admin("accounts:batchCreate", ["users": [["localId": "later", "createdAt": "9000000000000000"]]])
            #expect(future["error"]?.arrayValue?.count == 1)
            let page = try await api.send(
                .get, APIClient.v1 + "projects/demo-hearth/accounts:batchGet?nextPageToken=%01", body: nil, headers: APIClient.admin)
            #expect(page.errorCode == "INVALID_PAGE_SELECTION")
            #expect(try await api.lookup(try #require(user.string("idToken"))).status == 200)
        }
    }

    @Test("random JSON bodies on every endpoint never get a 5xx")
    func randomBodies() async throws {
        let keys = [
            "email", "password", "idToken", "localId", "oobCode", "requestType", "requestUri", "postBody", "displayName",
            "deleteProvider", "deleteAttribute", "customAttributes", "validSince", "identifier", "continueUri", "refreshToken",
            "grant_type", "returnIdpCredential", "returnOobLink", "emailVerified", "token",
        ]
        try await APIHarness.run { _, api in
            await propertyCheck(
                count: 150, input: Gen.int(in: 0...Self.endpoints.count - 1),
                Gen.int(in: 0...1_000_000).array(of: 0...8)
            ) { endpoint, numbers in
                var body: [String: JSONValue] = [:]
                for number in numbers {
                    body[keys[number % keys.count]] = Self.value(number / keys.count)
                }
                let reply = try? await api.v3(Self.endpoints[endpoint], .object(body))
                #expect(reply.map { $0.status < 500 } == true, "\(Self.endpoints[endpoint]) \(JSONValue.object(body).text)")
            }
        }
    }

    static func value(_ seed: Int) -> JSONValue {
        switch seed % 9 {
        case 0: .null
        case 1: .bool(seed % 2 == 0)
        case 2: .int(Int64(seed) - 500_000)
        case 3: .double(Double(seed) / 7)
        case 4: .string("")
        case 5: .string("x@y")
        case 6: .string(String(repeating: "é", count: seed % 300))
        case 7: .array([.int(Int64(seed)), .string("EMAIL_SIGNIN")])
        default: .object(["sub": .string("s\(seed)")])
        }
    }
}
