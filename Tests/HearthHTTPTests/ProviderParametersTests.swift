import Foundation
import HearthAuth
import HearthDomain
import HearthWire
import Testing

/// Yahoo's and GitHub's OAuth sign-in, checked against the fake providers: the scopes and
/// custom parameters an app asks for reach the provider; the parameters the flow sets itself can
/// not be replaced; and a Yahoo user whose email an existing account holds signs in the old way,
/// then links the pending Yahoo credential.
@Suite("provider scopes, custom parameters and the pending-credential recovery (GitHub, Yahoo)")
struct ProviderParametersTests {
    /// What the iOS SDK opens for an `OAuthProvider` with `scopes` and `customParameters`.
    static func handlerURL(provider: String, scopes: [String], customParameters: JSONValue) -> String {
        let query: [(String, String)] = [
            ("apiKey", "test-key"), ("authType", "signInWithRedirect"), ("ibi", "com.example.app"),
            ("sessionId", PendingAuthorizations.sessionHash(HeadfulSignInTests.sessionID)), ("v", "FirebaseAuth.iOS/12.0.0"),
            ("eventId", "EVENTIDXYZ"), ("providerId", provider), ("clientId", HeadfulSignInTests.iosClientId),
            ("scopes", scopes.joined(separator: ",")), ("customParameters", customParameters.text),
        ]
        return "/__/auth/handler?" + FormEncoding.encode(query)
    }

    /// An app's attempt to replace every parameter the flow owns.
    static let hijack: [String: JSONValue] = [
        "client_id": "evil-client", "redirect_uri": "https://evil.example/cb", "response_type": "token", "scope": "everything",
        "State": "forged", "nonce": "chosen", "code_challenge": "weak", "code_challenge_method": "plain",
    ]

    /// The provider's received authorization request, after the user consented (so it was a
    /// request the provider accepted), as a name -> values map.
    static func received(_ api: APIClient, _ providers: FakeProviders, opening url: String) async throws -> [String: [String]] {
        let authorization = try await HeadfulSignInTests.location(api, url)
        let before = providers.authorizationRequests().count
        let callback = try await providers.consent(at: authorization)
        #expect(callback.hasPrefix("/__/auth/handler?code="))
        let requests = providers.authorizationRequests()
        #expect(requests.count == before + 1)
        return Dictionary(grouping: try #require(requests.last), by: \.name).mapValues { $0.map(\.value) }
    }

    @Test(
        "Yahoo: prompt=login and language=fr reach the provider; mail-r and sdct-w join openid profile email; reserved parameters stay Hearth's"
    )
    func yahooParameters() async throws {
        try await HeadfulSignInTests.run { _, api, providers in
            var custom = Self.hijack
            custom["prompt"] = "login"
            custom["language"] = "fr"
            let asked = try await Self.received(
                api, providers,
                opening: Self.handlerURL(provider: "yahoo.com", scopes: ["mail-r", "sdct-w"], customParameters: .object(custom)))
            #expect(asked["prompt"] == ["login"])
            #expect(asked["language"] == ["fr"])
            #expect(asked["scope"] == ["openid profile email mail-r sdct-w"])
            #expect(asked["client_id"] == ["y-client"])
            #expect(asked["response_type"] == ["code"])
            #expect(asked["redirect_uri"]?.count == 1 && asked["redirect_uri"]?.first?.hasSuffix("/__/auth/handler") == true)
            #expect(asked["nonce"]?.count == 1 && asked["nonce"] != ["chosen"])
            #expect(asked["code_challenge"]?.count == 1 && asked["code_challenge"]?.first?.count == 43)
            #expect(asked["code_challenge_method"] == ["S256"])
            #expect(asked["state"]?.count == 1 && asked["State"] == nil && asked["state"] != ["forged"])
        }
    }

    @Test("GitHub: extra scopes join read:user user:email once each; reserved parameters stay Hearth's")
    func gitHubParameters() async throws {
        try await HeadfulSignInTests.run { _, api, providers in
            var custom = Self.hijack
            custom["allow_signup"] = "false"
            custom["login"] = "octocat"
            let asked = try await Self.received(
                api, providers,
                opening: Self.handlerURL(provider: "github.com", scopes: ["repo", "gist", "user:email"], customParameters: .object(custom)))
            #expect(asked["scope"] == ["read:user user:email repo gist"])
            #expect(asked["allow_signup"] == ["false"] && asked["login"] == ["octocat"])
            #expect(asked["client_id"] == ["gh-client"])
            #expect(asked["redirect_uri"]?.count == 1 && asked["redirect_uri"]?.first?.hasSuffix("/__/auth/handler") == true)
            #expect(asked["code_challenge_method"] == ["S256"] && asked["code_challenge"]?.first?.count == 43)
            #expect(asked["state"]?.count == 1 && asked["State"] == nil)
            #expect(asked["response_type"] == nil && asked["nonce"] == nil)
        }
    }

    @Test(
        "production: a Yahoo user whose email a password account holds is asked to confirm, signs in the old way, links the pending credential"
    )
    func yahooRecovery() async throws {
        try await HeadfulSignInTests.run(production: true) { harness, api, providers in
            let created = try await api.post(
                APIClient.v1 + "projects/demo-hearth/accounts", ["email": "yuki@yahoo.example", "password": "correct-horse-42"],
                headers: HeadfulSignInTests.productionAdmin)
            #expect(created.status == 200)
            let uid = try #require(created.string("localId"))
            func yahooFlow() async throws -> Reply {
                let authorization = try await HeadfulSignInTests.location(api, HeadfulSignInTests.handlerURL(provider: "yahoo.com"))
                let app = try await HeadfulSignInTests.appCallback(api, try await providers.consent(at: authorization))
                return try await api.v1(
                    "signInWithIdp",
                    [
                        "requestUri": .string(app["link"] ?? ""), "sessionId": .string(HeadfulSignInTests.sessionID),
                        "postBody": "providerId=yahoo.com", "returnSecureToken": true, "returnIdpCredential": true,
                    ])
            }
            let pending = try await yahooFlow()
            #expect(pending.status == 200 && pending["needConfirmation"] == true, "\(pending.json)")
            #expect(pending.string("email") == "yuki@yahoo.example" && pending.string("localId") == uid)
            #expect(pending["idToken"] == nil && pending["refreshToken"] == nil)
            // Nothing was linked or created by the attempt.
            #expect(try harness.eventTypes(of: uid) == ["account.created"])

            // The pending credential, as the SDK builds it from the answer (AuthErrorUserInfoUpdatedCredentialKey).
            let pendingIdToken = try #require(pending.string("oauthIdToken"))
            let accessToken = try #require(pending.string("oauthAccessToken"))
            let password = try await api.v1(
                "signInWithPassword", ["email": "yuki@yahoo.example", "password": "correct-horse-42", "returnSecureToken": true])
            #expect(password.string("localId") == uid)
            let linked = try await api.v1(
                "signInWithIdp",
                [
                    "requestUri": "http://localhost",
                    "postBody": .string("providerId=yahoo.com&id_token=\(pendingIdToken)&access_token=\(accessToken)"),
                    "idToken": password["idToken"] ?? .null, "returnSecureToken": true, "returnIdpCredential": true,
                ])
            #expect(linked.status == 200 && linked.string("localId") == uid, "\(linked.json)")
            #expect(claims(linked.string("idToken"))["firebase"]?["identities"]?["yahoo.com"] == ["yahoo-user-77"])
            let user = try await api.lookup(try #require(linked.string("idToken")))["users"]?.arrayValue?.first
            let providerIds = user?["providerUserInfo"]?.arrayValue?.compactMap { $0["providerId"]?.stringValue }
            #expect(providerIds.map(Set.init) == ["password", "yahoo.com"])

            // From now on Yahoo opens that account directly, and the password still does too.
            let again = try await yahooFlow()
            #expect(again.string("localId") == uid && again["needConfirmation"] == nil && again["isNewUser"] == nil, "\(again.json)")
            let byPassword = try await api.v1("signInWithPassword", ["email": "yuki@yahoo.example", "password": "correct-horse-42"])
            #expect(byPassword.string("localId") == uid)
        }
    }
}
