import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthHTTP
import HearthWire
import HummingbirdTesting
import NIOCore
import Testing

/// An email link an app opens itself is a universal link (iOS) or App Link
/// (Android) on one of the project's link domains. Hearth serves, for each link domain (by the
/// request's Host), the apps' association files built from the project's registered apps, and
/// a page for a link opened where the app is not installed.
@Suite("app links: apple-app-site-association, assetlinks.json and the fallback page")
struct AppLinkTests {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
    static let host = HTTPField.Name("Host")!

    static func run(_ body: @escaping @Sendable (APIHarness, APIClient) async throws -> Void) async throws {
        try await APIHarness.run(configure: { configuration in
            configuration.profile = .production
            configuration.projects.apiKeys = ["test-key": "demo-hearth", "other-key": "other-project"]
            configuration.secrets.adminTokens = [AdminCredential(token: HeadfulSignInTests.adminToken)]
            configuration.listen.publicUrl = "http://127.0.0.1:9099"
            configuration.mail.actionUrl = "https://app.example.com/__/auth/action"
        }) { harness, api in try await body(harness, api) }
    }

    static func patch(_ api: APIClient, project: String = "demo-hearth", _ body: JSONValue, mask: String) async throws -> Reply {
        try await api.send(
            .patch, "/identitytoolkit.googleapis.com/v2/projects/\(project)/config?updateMask=\(mask)",
            body: ByteBuffer(bytes: body.encoded()), headers: HeadfulSignInTests.productionAdmin)
    }

    static let appsMask =
        "linkDomains,authorizedDomains,registeredApps.iosBundleIds,registeredApps.androidPackages,registeredApps.iosApps,registeredApps.androidApps"

    /// demo-hearth on links.example.com with an iOS and an Android app; other-project on
    /// links.other.example with its own iOS app.
    static func configureApps(_ api: APIClient) async throws {
        let mine = try await Self.patch(
            api,
            [
                "linkDomains": ["links.example.com"], "authorizedDomains": ["localhost", "app.example.com"],
                "registeredApps": [
                    "iosBundleIds": ["com.example.app"], "androidPackages": ["com.example.android"],
                    "iosApps": [["bundleId": "com.example.app", "teamId": "ABCDE12345", "appStoreId": "1234567890"]],
                    "androidApps": [["packageName": "com.example.android", "sha256Hashes": .array([.string(fingerprint)])]],
                ],
            ], mask: appsMask)
        #expect(mine.status == 200, "\(mine.json)")
        let theirs = try await Self.patch(
            api, project: "other-project",
            [
                "linkDomains": ["links.other.example"],
                "registeredApps": ["iosApps": [["bundleId": "org.other.app", "teamId": "ZYXWV98765"]]],
            ], mask: "linkDomains,registeredApps.iosApps")
        #expect(theirs.status == 200, "\(theirs.json)")
    }

    static func get(_ api: APIClient, _ path: String, host: String) async throws -> TestResponse {
        try await api.client.executeRequest(uri: path, method: .get, headers: [Self.host: host], body: nil)
    }

    @Test("Team IDs, App Store ids and SHA-256 fingerprints are project settings, checked and normalized")
    func settings() async throws {
        try await Self.run { _, api in
            try await Self.configureApps(api)
            let lowercaseBare = Self.fingerprint.replacingOccurrences(of: ":", with: "").lowercased()
            let normalized = try await Self.patch(
                api,
                [
                    "registeredApps": [
                        "androidApps": [["packageName": "com.example.android", "sha256Hashes": .array([.string(lowercaseBare)])]]
                    ]
                ],
                mask: "registeredApps.androidApps")
            #expect(normalized["registeredApps"]?["androidApps"]?.arrayValue?.first?["sha256Hashes"] == .array([.string(Self.fingerprint)]))
            #expect(normalized["registeredApps"]?["iosApps"]?.arrayValue?.first?["teamId"] == "ABCDE12345")
            #expect(normalized["registeredApps"]?["iosApps"]?.arrayValue?.first?["appStoreId"] == "1234567890")
            for bad: JSONValue in [
                ["iosApps": [["bundleId": "com.example.app", "teamId": "abc"]]],
                ["iosApps": [["bundleId": "com.example.app"]]],
                ["iosApps": [["bundleId": "com.example.app", "teamId": "ABCDE12345", "appStoreId": "12ab"]]],
                ["iosApps": [["bundleId": "com example", "teamId": "ABCDE12345"]]],
                ["androidApps": [["packageName": "com.example.android", "sha256Hashes": ["14:6D"]]]],
                [
                    "androidApps": [
                        [
                            "packageName": "com.example.android",
                            "sha256Hashes": .array([.string(String(repeating: "zz:", count: 31) + "zz")]),
                        ]
                    ]
                ],
                ["androidApps": [["sha256Hashes": .array([.string(Self.fingerprint)])]]],
            ] {
                let refused = try await Self.patch(api, ["registeredApps": bad], mask: "registeredApps.iosApps,registeredApps.androidApps")
                #expect(refused.status == 400, "\(bad.text): \(refused.json)")
            }
        }
    }

    @Test("apple-app-site-association: the applinks of the Host's project, for the action-link path; 404 elsewhere")
    func appleAppSiteAssociation() async throws {
        try await Self.run { _, api in
            #expect(try await Self.get(api, "/.well-known/apple-app-site-association", host: "links.example.com").status == .notFound)
            try await Self.configureApps(api)
            for host in ["links.example.com", "LINKS.example.com:443"] {
                let response = try await Self.get(api, "/.well-known/apple-app-site-association", host: host)
                #expect(response.status == .ok, "\(host)")
                #expect(response.headers[.contentType] == "application/json")
                let body = try #require(JSONValue.parse(response.body.readableBytesView))
                let details = body["applinks"]?["details"]?.arrayValue
                #expect(details?.count == 1)
                #expect(details?.first?["appIDs"] == ["ABCDE12345.com.example.app"])
                #expect(details?.first?["components"]?.arrayValue?.first?["/"] == "/__/auth/action")
            }
            let other = try await Self.get(api, "/.well-known/apple-app-site-association", host: "links.other.example")
            let otherBody = try #require(JSONValue.parse(other.body.readableBytesView))
            #expect(otherBody["applinks"]?["details"]?.arrayValue?.first?["appIDs"] == ["ZYXWV98765.org.other.app"])
            // Another project may not claim a link domain: the first one keeps it.
            let squatter = try await Self.patch(
                api, project: "other-project", ["linkDomains": ["links.other.example", "LINKS.example.com"]], mask: "linkDomains")
            #expect(squatter.status == 400 && squatter.errorCode == "INVALID_CONFIG", "\(squatter.json)")
            let kept = try await Self.get(api, "/.well-known/apple-app-site-association", host: "links.example.com")
            #expect(
                JSONValue.parse(kept.body.readableBytesView)?["applinks"]?["details"]?.arrayValue?.first?["appIDs"] == [
                    "ABCDE12345.com.example.app"
                ])
            for stranger in ["app.example.com", "127.0.0.1:9099", "evil.example", String(repeating: "a", count: 5000)] {
                #expect(try await Self.get(api, "/.well-known/apple-app-site-association", host: stranger).status == .notFound)
            }
        }
    }

    @Test("assetlinks.json: Digital Asset Links for the Host's project's Android apps")
    func assetLinks() async throws {
        try await Self.run { _, api in
            try await Self.configureApps(api)
            let response = try await Self.get(api, "/.well-known/assetlinks.json", host: "links.example.com")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            let statements = try #require(JSONValue.parse(response.body.readableBytesView)?.arrayValue)
            #expect(statements.count == 1)
            #expect(statements.first?["relation"] == ["delegate_permission/common.handle_all_urls"])
            #expect(statements.first?["target"]?["namespace"] == "android_app")
            #expect(statements.first?["target"]?["package_name"] == "com.example.android")
            #expect(statements.first?["target"]?["sha256_cert_fingerprints"] == .array([.string(Self.fingerprint)]))
            // The other project has no Android app; a stranger's host is no link domain.
            #expect(try await Self.get(api, "/.well-known/assetlinks.json", host: "links.other.example").status == .notFound)
            #expect(try await Self.get(api, "/.well-known/assetlinks.json", host: "app.example.com").status == .notFound)
        }
    }

    @Test("a sign-in link opened without the app: a page that says what to do, with the store and a way to continue")
    func fallbackPage() async throws {
        try await Self.run { _, api in
            try await Self.configureApps(api)
            let sent = try await api.post(
                APIClient.v1 + "projects/demo-hearth/accounts:sendOobCode",
                [
                    "requestType": "EMAIL_SIGNIN", "email": "app@example.com", "canHandleCodeInApp": true,
                    "continueUrl": "https://app.example.com/done?cart=1", "iOSBundleId": "com.example.app",
                    "androidPackageName": "com.example.android", "returnOobLink": true,
                ], headers: HeadfulSignInTests.productionAdmin)
            let oobLink = try #require(sent.string("oobLink"), "\(sent.json)")
            let link = try #require(URLComponents(string: oobLink))
            #expect(link.host == "links.example.com")
            // The path the association files claim is the link's own.
            let association = try await Self.get(api, "/.well-known/apple-app-site-association", host: "links.example.com")
            let claimed = JSONValue.parse(association.body.readableBytesView)?["applinks"]?["details"]?.arrayValue?.first?["components"]?
                .arrayValue?.first?["/"]?.stringValue
            #expect(claimed == link.path)

            let target = link.path + "?" + (link.percentEncodedQuery ?? "")
            let page = try await Self.get(api, target, host: "links.example.com")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            let html = String(buffer: page.body)
            #expect(html.contains("https://apps.apple.com/app/id1234567890"))
            #expect(html.contains("https://play.google.com/store/apps/details?id=com.example.android"))
            // Continuing in the browser: the project's action handler, with the link's own query.
            #expect(html.contains("href=\"https://app.example.com/__/auth/action?"))
            #expect(html.contains("oobCode=\(link.queryItems?.first { $0.name == "oobCode" }?.value ?? "-")"))
            #expect(!html.contains("<script"))

            // What a link carries is text on the page, never markup.
            let hostile = try await Self.get(
                api, link.path + "?mode=signIn&oobCode=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&ibi=com.example.app",
                host: "links.example.com")
            let hostileHTML = String(buffer: hostile.body)
            #expect(!hostileHTML.contains("<script>"))
            #expect(hostileHTML.contains("&quot;&gt;&lt;script&gt;") || hostileHTML.contains("%22%3E%3Cscript%3E"))
            // The same path on a host that is no link domain is not Hearth's page.
            #expect(try await Self.get(api, target, host: "app.example.com").status == .notFound)
        }
    }
}
