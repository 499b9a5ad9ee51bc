import Foundation
import HTTPTypes
import HearthWire
import HummingbirdTesting
import Testing

/// `/__/auth/handler` hands its result, or its error, to the app by a link to the app's URL
/// scheme, built from what the request names: never to a system handler's scheme, and in
/// production never to an app the project did not register.
@Suite("headful sign-in: where the handler's links may go")
struct HandlerRedirectTests {
    /// The handler opened for a provider that is not enabled (the error path), naming the app by
    /// `clientId` or `appId`.
    static func failing(clientId: String? = nil, appId: String? = nil, bundle: String = "com.example.app") -> String {
        var uri = HeadfulSignInTests.handlerURL(provider: "apple.com")
            .replacingOccurrences(of: "&clientId=" + FormEncoding.percentEncoded(HeadfulSignInTests.iosClientId), with: "")
            .replacingOccurrences(of: "ibi=com.example.app", with: "ibi=" + FormEncoding.percentEncoded(bundle))
        if let clientId { uri += "&clientId=" + FormEncoding.percentEncoded(clientId) }
        if let appId { uri += "&appId=" + FormEncoding.percentEncoded(appId) }
        return uri
    }

    static func open(_ api: APIClient, _ uri: String) async throws -> (status: HTTPResponse.Status, location: String?) {
        let response = try await api.client.executeRequest(uri: uri, method: .get, headers: [:], body: nil)
        return (response.status, response.headers[.location])
    }

    @Test("development: ms-msdt, itms-services, intent, javascript and other system schemes get an error page, not a link")
    func systemSchemes() async throws {
        try await HeadfulSignInTests.run { _, api, _ in
            for clientId in ["ms-msdt", "itms-services", "intent", "javascript", "tel", "ms-officecmd", "apple.com.x-apple", "x.."] {
                let opened = try await Self.open(api, Self.failing(clientId: clientId))
                #expect(opened.status == .badRequest && opened.location == nil, "clientId \(clientId): \(opened)")
            }
            for appId in ["ms-msdt", "1:2:ios:x/y", "1:2:android:abc", "x:1:ios:abc"] {
                let opened = try await Self.open(api, Self.failing(appId: appId))
                #expect(opened.status == .badRequest && opened.location == nil, "appId \(appId): \(opened)")
            }
            let bundleOnly = try await Self.open(api, Self.failing(bundle: "itms-services"))
            #expect(bundleOnly.status == .badRequest && bundleOnly.location == nil)
            // An app's own scheme still gets the error, as the emulator hands it.
            let reversed = try await Self.open(api, Self.failing(clientId: HeadfulSignInTests.iosClientId))
            #expect(reversed.location?.hasPrefix("com.googleusercontent.apps.123-abc://firebaseauth/link?") == true)
            let firebaseAppId = try await Self.open(api, Self.failing(appId: "1:123:ios:abc123"))
            #expect(firebaseAppId.location?.hasPrefix("app-1-123-ios-abc123://firebaseauth/link?") == true)
        }
    }

    @Test("production: an app the project did not register, or an unknown API key, gets an error page whatever failed")
    func unregisteredApps() async throws {
        try await HeadfulSignInTests.run(production: true) { _, api, _ in
            let stranger = try await Self.open(api, Self.failing(clientId: "com.evil.client", bundle: "com.evil.app"))
            #expect(stranger.status == .badRequest && stranger.location == nil, "\(stranger)")
            let registered = try await Self.open(api, Self.failing(clientId: HeadfulSignInTests.iosClientId))
            #expect(registered.location?.hasPrefix("com.googleusercontent.apps.123-abc://firebaseauth/link?") == true)
            let systemScheme = try await Self.open(api, Self.failing(clientId: "ms-msdt"))
            #expect(systemScheme.status == .badRequest && systemScheme.location == nil)
            let badKey = try await Self.open(
                api, Self.failing(clientId: HeadfulSignInTests.iosClientId).replacingOccurrences(of: "apiKey=test-key", with: "apiKey=nope")
            )
            #expect(badKey.status == .badRequest && badKey.location == nil, "\(badKey)")
        }
    }
}
