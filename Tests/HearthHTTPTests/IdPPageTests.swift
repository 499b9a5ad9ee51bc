import Foundation
import HTTPTypes
import HearthAuth
import HearthWire
import HummingbirdTesting
import NIOCore
import Testing

/// The fake identity provider page of the headful OAuth flows (wire checklist item 9), followed
/// the way the iOS SDK's web view and then the SDK itself do.
@Suite("development identity provider page: /emulator/auth/handler")
struct IdPPageTests {
    /// The query the iOS SDK opens (firebase-clients-wire.md A.11), in its order.
    static let iosQuery =
        "apiKey=ios-key&authType=signInWithRedirect&ibi=com.example.app&sessionId=abc123&v=FirebaseAuth.iOS%2F11&eventId=EVTQWERTYU&providerId=github.com&clientId=123-abc.apps.googleusercontent.com&scopes=&customParameters=%7B%7D"

    struct Page {
        var status: Int
        var location: String?
        var text: String
    }

    static func get(_ api: APIClient, _ uri: String) async throws -> Page {
        let response = try await api.client.executeRequest(uri: uri, method: .get, headers: [:], body: nil)
        return Page(
            status: Int(response.status.code), location: response.headers[.location],
            text: String(decoding: response.body.readableBytesView, as: UTF8.self))
    }

    /// The response URL the SDK passes to verifyAssertion, out of the iOS deep link.
    static func responseURL(fromDeepLink link: String, scheme: String) throws -> String {
        let prefix = scheme + "://firebaseauth/link?deep_link_id="
        #expect(link.hasPrefix(prefix))
        let inner = try #require(String(link.dropFirst(prefix.count)).removingPercentEncoding)
        let callback = try #require(URLComponents(string: inner))
        #expect(callback.path == "/__/auth/callback")
        let items = callback.queryItems ?? []
        #expect(items.first { $0.name == "authType" }?.value == "signInWithRedirect")
        #expect(items.first { $0.name == "eventId" }?.value == "EVTQWERTYU")
        return try #require(items.first { $0.name == "link" }?.value)
    }

    static func verifyAssertion(_ api: APIClient, _ requestUri: String) async throws -> Reply {
        // As VerifyAssertionRequest.swift sends it: the postBody names only the provider.
        try await api.v3(
            "verifyAssertion",
            [
                "requestUri": .string(requestUri), "postBody": "providerId=github.com", "sessionId": "abc123",
                "returnSecureToken": true, "returnIdpCredential": true,
            ])
    }

    @Test("iOS: a new account, then the same account chosen again, through the deep link the SDK reads")
    func iosFlow() async throws {
        try await APIHarness.run { _, api in
            let empty = try await Self.get(api, "/emulator/auth/handler?" + Self.iosQuery)
            #expect(empty.status == 200)
            #expect(empty.text.contains("No github.com accounts exist yet"))
            #expect(empty.text.contains(#"<input type="hidden" name="eventId" value="EVTQWERTYU">"#))

            let finish =
                "/emulator/auth/handler?" + Self.iosQuery
                + "&finish=1&email=octo%40example.com&name=%3Cb%3EOcto%3C%2Fb%3E&screen_name=octocat"
            let created = try await Self.get(api, finish)
            #expect(created.status == 303)
            let scheme = "com.googleusercontent.apps.123-abc"
            let response = try Self.responseURL(fromDeepLink: try #require(created.location), scheme: scheme)
            let first = try await Self.verifyAssertion(api, response)
            #expect(first.status == 200)
            #expect(first["isNewUser"] == true)
            #expect(first.string("email") == "octo@example.com")
            let federatedId = try #require(first.string("federatedId"))
            #expect(federatedId.count == 40 && federatedId.allSatisfy(\.isNumber))

            // The page now offers that account (its name escaped), and choosing it signs the same user in.
            let listed = try await Self.get(api, "/emulator/auth/handler?" + Self.iosQuery)
            #expect(listed.text.contains("&lt;b&gt;Octo&lt;/b&gt;"))
            #expect(!listed.text.contains("<b>Octo</b>"))
            let href = try #require(
                listed.text.components(separatedBy: "<a href=\"").dropFirst().first?.components(separatedBy: "\"").first)
            let reused = try await Self.get(api, href.replacingOccurrences(of: "&amp;", with: "&"))
            let again = try await Self.verifyAssertion(
                api, try Self.responseURL(fromDeepLink: try #require(reused.location), scheme: scheme))
            #expect(again.string("localId") == first.string("localId"))
            #expect(again["isNewUser"] == nil)
        }
    }

    @Test("the app-id scheme for iOS, the intent for Android, and refusals")
    func otherApps() async throws {
        try await APIHarness.run { _, api in
            let appId = try await Self.get(
                api, "/emulator/auth/handler?apiKey=k&providerId=github.com&ibi=com.example&appId=1%3A123%3Aios%3Aabc&eventId=E&finish=1")
            #expect(appId.location?.hasPrefix("app-1-123-ios-abc://firebaseauth/link?deep_link_id=") == true)

            let android = try await Self.get(
                api,
                "/emulator/auth/handler?apiKey=k&providerId=github.com&apn=com.example.android&authType=signInWithRedirect&eventId=E2&finish=1&email=a%40example.com"
            )
            let intent = try #require(android.location)
            let prefix =
                "intent://firebase.auth/#Intent;scheme=genericidp;package=com.example.android;S.authType=signInWithRedirect;S.eventId=E2;S.link="
            #expect(intent.hasPrefix(prefix) && intent.hasSuffix(";B.encryptionEnabled=false;end;"))
            let link = try #require(String(intent.dropFirst(prefix.count).prefix { $0 != ";" }).removingPercentEncoding)
            #expect(try await Self.verifyAssertion(api, link).string("email") == "a@example.com")

            let missing = try await api.send(.get, "/emulator/auth/handler?providerId=github.com", body: nil, headers: [:])
            #expect(missing.status == 400)
            #expect(missing["authEmulator"]?["error"] == "missing apiKey or providerId query parameters")
            let web = try await Self.get(
                api, "/emulator/auth/handler?apiKey=k&providerId=github.com&appName=%5BDEFAULT%5D&redirectUrl=http%3A%2F%2Flocalhost%2F")
            #expect(web.status == 400 && web.text.contains("signInWithCredential"))
        }
    }
}
