import Foundation
import HearthApp
import HearthAuth
import HearthDomain
import HearthTesting
import HearthWire
import Testing

@Suite("custom tokens: emulator-style unsigned in development, signed by a configured key in production")
struct CustomTokenTests {
    /// What firebase-admin's `create_custom_token` builds in emulator mode: alg none, empty signature.
    static func unsigned(_ payload: JSONValue) -> String {
        Base64URL.encode(JSONValue.object(["alg": "none", "typ": "JWT"]).encoded()) + "."
            + Base64URL.encode(payload.encoded()) + "."
    }

    static func payload(uid: JSONValue = "backend-user", claims: JSONValue? = nil, iat: Int64 = 0, lifetime: Int64 = 3600) -> JSONValue {
        var object: [String: JSONValue] = [
            "iss": "firebase-auth-emulator@example.com", "sub": "firebase-auth-emulator@example.com",
            "aud": .string(CustomTokenVerifier.audience), "uid": uid, "iat": .int(iat), "exp": .int(iat + lifetime),
        ]
        if let claims { object["claims"] = claims }
        return .object(object)
    }

    @Test("an unsigned token signs in (new, then existing); its claims are top-level and survive refresh")
    func development() async throws {
        try await APIHarness.run { harness, api in
            let token = Self.unsigned(Self.payload(claims: ["role": "editor", "tier": 2]))
            let first = try await api.v1("signInWithCustomToken", ["token": .string(token), "returnSecureToken": true])
            #expect(first.status == 200)
            #expect(first.string("kind") == "identitytoolkit#VerifyCustomTokenResponse")
            #expect(first["isNewUser"] == true)
            let idClaims = claims(first.string("idToken"))
            #expect(idClaims["sub"] == "backend-user")
            #expect(idClaims["role"] == "editor")
            #expect(idClaims["tier"] == .int(2))
            #expect(idClaims["firebase"]?["sign_in_provider"] == "custom")

            let lookup = try await api.lookup(try #require(first.string("idToken")))
            #expect(lookup["users"]?.arrayValue?.first?["customAuth"] == true)
            let refreshed = try await api.refresh(try #require(first.string("refreshToken")))
            #expect(claims(refreshed.string("id_token"))["role"] == "editor")
            #expect(claims(refreshed.string("id_token"))["firebase"]?["sign_in_provider"] == "custom")

            // The account's own claims apply too; the token's win where both name one.
            let set = try await api.admin(
                "accounts:update", ["localId": "backend-user", "customAttributes": #"{"role":"viewer","plan":"pro"}"#])
            #expect(set.status == 200)
            let again = try await api.v3("verifyCustomToken", ["token": .string(token), "returnSecureToken": true])
            #expect(again["isNewUser"] == false)
            #expect(claims(again.string("idToken"))["role"] == "editor")
            #expect(claims(again.string("idToken"))["plan"] == "pro")
            // The emulator's plain-JSON form, with a numeric uid.
            let json = try await api.v1("signInWithCustomToken", ["token": #"{"uid": 42}"#])
            #expect(claims(json.string("idToken"))["sub"] == "42")
            #expect(Array(try harness.eventTypes(of: "backend-user").prefix(2)) == ["account.created", "account.signed_in"])
        }
    }

    @Test("bad custom tokens get Firebase's errors")
    func errors() async throws {
        try await APIHarness.run { _, api in
            var wrongAudience = Self.payload().objectValue!
            wrongAudience["aud"] = "demo-hearth"
            let cases: [(JSONValue, String)] = [
                (.null, "MISSING_CUSTOM_TOKEN"),
                ("not.a-jwt", "INVALID_CUSTOM_TOKEN"),
                ("{not json", "INVALID_CUSTOM_TOKEN"),
                (.string(Self.unsigned(.object(wrongAudience))), "INVALID_CUSTOM_TOKEN"),
                (.string(Self.unsigned(Self.payload(uid: .null))), "MISSING_IDENTIFIER"),
                (.string(Self.unsigned(Self.payload(claims: ["sub": "x"]))), "FORBIDDEN_CLAIM"),
                (.string(Self.unsigned(Self.payload(claims: "admin"))), "INVALID_CLAIMS"),
            ]
            for (token, expected) in cases {
                let reply = try await api.v1("signInWithCustomToken", ["token": token])
                #expect(reply.status == 400)
                #expect(reply.errorCode == expected, "\(token)")
            }
            let token = JSONValue.string(Self.unsigned(Self.payload(uid: "to-disable")))
            #expect(try await api.v1("signInWithCustomToken", ["token": token]).status == 200)
            #expect(try await api.admin("accounts:update", ["localId": "to-disable", "disableUser": true]).status == 200)
            #expect(try await api.v1("signInWithCustomToken", ["token": token]).errorCode == "USER_DISABLED")
        }
    }

    @Test("production accepts only current tokens signed by a configured key")
    func production() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-ct-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let backend = try SigningKey.generate(.es256)
        let keyFile = directory + "/backend.pem"
        try backend.publicKeyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let stranger = try SigningKey.generate(.rs256)

        try await APIHarness.run(configure: {
            ProfileTests.production(&$0)
            $0.secrets.customTokenKeys = [keyFile]
        }) { harness, api in
            func signIn(_ token: String) async throws -> Reply {
                try await api.post(APIClient.v1 + "accounts:signInWithCustomToken?key=key-a", ["token": .string(token)])
            }
            let now = harness.clock.now() / 1000
            let signed = try JWT.sign(payload: Self.payload(claims: ["role": "ops"], iat: now), with: backend)
            let accepted = try await signIn(signed)
            #expect(accepted.status == 200)
            #expect(claims(accepted.string("idToken"))["role"] == "ops")
            #expect(try await signIn(Self.unsigned(Self.payload(iat: now))).errorCode == "INVALID_CUSTOM_TOKEN")
            #expect(try await signIn(try JWT.sign(payload: Self.payload(iat: now), with: stranger)).errorCode == "INVALID_CUSTOM_TOKEN")
            let tooLong = try JWT.sign(payload: Self.payload(iat: now, lifetime: 7200), with: backend)
            #expect(try await signIn(tooLong).errorCode == "INVALID_CUSTOM_TOKEN")
            harness.clock.advance(milliseconds: 3_601_000)
            #expect(try await signIn(signed).errorCode == "INVALID_CUSTOM_TOKEN")
        }
        try await APIHarness.run(configure: ProfileTests.production) { harness, api in
            let token = try JWT.sign(payload: Self.payload(iat: harness.clock.now() / 1000), with: backend)
            let refused = try await api.post(APIClient.v1 + "accounts:signInWithCustomToken?key=key-a", ["token": .string(token)])
            #expect(refused.errorCode == "INVALID_CUSTOM_TOKEN")
        }
    }
}
