import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird
import NIOCore

/// What a link domain serves for the apps that open email links themselves (a link's action
/// code settings name the iOS bundle id or Android package that opens it), chosen by the
/// request's host among the projects' `linkDomains`: Apple's apple-app-site-association and
/// Android's assetlinks.json, built from the project's registered apps, and a page for a link
/// opened where the app is not installed.
struct AppLinksAPI: Sendable {
    let projects: ProjectService
    /// The path action links carry (the action handler's): the one path the apps claim.
    let linkPath: String
    /// Where a browser continues with a link: the project's action handler (`actionUrl`).
    let actionURL: String?

    init(projects: ProjectService) {
        self.projects = projects
        actionURL = projects.settings.actionURL
        linkPath = Self.path(of: projects.settings.actionURL)
    }

    /// The action handler's path (links keep it when they move to a link domain); development
    /// links point at `/emulator/action`.
    static func path(of actionURL: String?) -> String {
        guard let actionURL else { return "/emulator/action" }
        let path = URLComponents(string: actionURL)?.path ?? ""
        return path.isEmpty ? "/" : path
    }

    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    /// HTTP/1's `Host`, as a field (HTTPTypes keeps it as the authority; some front ends and
    /// the router tester pass it among the fields).
    static let hostField = HTTPField.Name("Host")!
    /// Association files change when settings do: verifiers (Apple's CDN) may keep them a while.
    static let cacheControl = "public, max-age=300"

    /// The host the request names, lowercased, without its port: a `Host` field when one is
    /// among the fields, else the authority NIO took from it. IP literals are no link domains.
    static func host(_ request: Request) -> String? {
        guard let raw = request.headers[Self.hostField] ?? request.head.authority, (1...260).contains(raw.utf8.count),
            !raw.hasPrefix("[")
        else { return nil }
        let host = raw.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0].lowercased()
        return (1...253).contains(host.utf8.count) ? host : nil
    }

    private func owner(_ request: Request) throws -> ProjectConfig? {
        guard let host = Self.host(request) else { return nil }
        return try projects.linkDomainOwner(host)
    }

    /// `GET /.well-known/apple-app-site-association`: the project's iOS apps (`TEAMID.bundleId`)
    /// open the action-link path as universal links.
    func appleAppSiteAssociation(_ request: Request) throws -> Response {
        guard let config = try owner(request), !config.iosApps.isEmpty else { throw FirebaseError.notFound }
        let details: JSONValue = [
            "appIDs": .array(config.iosApps.map { .string($0.appLinkId) }),
            "components": [["/": .string(linkPath), "comment": "Email action links (sign-in, reset, verification)"]],
        ]
        return Self.json(["applinks": ["details": [details]]])
    }

    /// `GET /.well-known/assetlinks.json`: the project's Android apps, by signing certificate,
    /// handle the domain's links (Digital Asset Links).
    func assetLinks(_ request: Request) throws -> Response {
        guard let config = try owner(request), !config.androidApps.isEmpty else { throw FirebaseError.notFound }
        return Self.json(
            .array(
                config.androidApps.map { app -> JSONValue in
                    [
                        "relation": ["delegate_permission/common.handle_all_urls"],
                        "target": [
                            "namespace": "android_app", "package_name": .string(app.packageName),
                            "sha256_cert_fingerprints": .array(app.sha256Hashes.map(JSONValue.string)),
                        ],
                    ]
                }))
    }

    /// `GET <action-link path>` on a link domain: the link reached a browser, so the app is not
    /// installed there (or the link was opened on another device). The page says so, offers
    /// the app's store page for a registered app, and a way on in the browser: the project's
    /// action handler with the link's own parameters.
    func linkPage(_ request: Request) throws -> Response {
        guard let config = try owner(request) else { throw FirebaseError.notFound }
        let query = QueryString(request).values
        var body = "<h1>Open this link in the app</h1>"
        body +=
            "<p>This link is meant to be opened by the app it was sent from. Open it on the device where the app is "
            + "installed, or install the app and open the link again.</p>"
        // Only the project's own apps: a link's `ibi` or `apn` must not send anyone elsewhere.
        if let bundle = query["ibi"], let store = config.iosApps.first(where: { $0.bundleId == bundle })?.appStoreId {
            body += Self.button("Get the app on the App Store", "https://apps.apple.com/app/id" + store)
        }
        if let package = query["apn"],
            config.androidPackages.contains(package) || config.androidApps.contains(where: { $0.packageName == package })
        {
            body += Self.button(
                "Get the app on Google Play", "https://play.google.com/store/apps/details?id=" + FormEncoding.percentEncoded(package))
        }
        if let actionURL, !query.isEmpty {
            let carried = FormEncoding.encode(query.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) })
            body += "<p>Or " + Self.link("continue in this browser", actionURL + (actionURL.contains("?") ? "&" : "?") + carried) + ".</p>"
        }
        var response = HTMLPage.response(.ok, title: "Open this link in the app", body: body)
        // The page's URL carries the one-time code: no script, no frame, and no Referer to the stores.
        response.headers[.contentSecurityPolicy] = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        response.headers[Self.referrerPolicy] = "no-referrer"
        return response
    }

    private static func button(_ label: String, _ url: String) -> String {
        "<p>" + link(label, url) + "</p>"
    }

    private static func link(_ label: String, _ url: String) -> String {
        "<a rel=\"noreferrer\" href=\"\(HTMLPage.escaped(url))\">\(HTMLPage.escaped(label))</a>"
    }

    private static func json(_ body: JSONValue) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: cacheControl],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }

    /// Hearth's own paths, which an action handler's path must not shadow.
    static func isHearthPath(_ path: String) -> Bool {
        let exact: Set<String> = ["/", "/healthz", "/readyz", "/metrics", "/__/auth/handler"]
        let prefixes = [
            "/.well-known/", "/identitytoolkit.googleapis.com/", "/securetoken.googleapis.com/", "/www.googleapis.com/", "/hearth/",
            "/emulator/",
        ]
        return exact.contains(path) || prefixes.contains { path.hasPrefix($0) }
    }
}
