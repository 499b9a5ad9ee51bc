import Foundation
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// `GET /emulator/auth/handler`: the development profile's fake identity provider page, where
/// the SDKs' headful OAuth flows land (the Auth Emulator's counterpart of `/__/auth/handler`).
/// The page lists the accounts already linked to the provider and offers a new one; choosing
/// one comes back here with `finish=1`, and Hearth sends the browser on to the app: the iOS
/// deep link `<scheme>://firebaseauth/link?deep_link_id=…` or the Android intent, each
/// carrying the response URL whose `id_token` `signInWithIdp` then reads.
struct EmulatorIdPPage: Sendable {
    let service: AuthService
    let project: ProjectID

    func handle(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let query = QueryString(request).values
        guard let providerId = query["providerId"], !providerId.isEmpty, query["apiKey"].map({ !$0.isEmpty }) == true else {
            return JSONResponse.make(.badRequest, ["authEmulator": ["error": "missing apiKey or providerId query parameters"]])
        }
        // Web popups and redirects need the emulator's iframe relay, which Hearth does not serve.
        guard let app = App(query) else {
            return page(
                .badRequest,
                "<p>Hearth finishes headful sign-in for the iOS and Android SDKs (<code>ibi</code> or <code>apn</code>). "
                    + "For web apps, sign in with <code>signInWithCredential</code> and a fake credential instead.</p>")
        }
        let origin = request.baseURL
        if query["finish"] == "1" {
            return Response(status: .seeOther, headers: [.location: app.link(finishing: query, providerId: providerId, origin: origin)])
        }
        let caller = context.caller(project: project, isAdmin: false)
        let linked = try service.accounts(linkedTo: ProviderID(providerId), caller).compactMap { account in
            account.providers.first { $0.providerId.rawValue == providerId }
        }
        return page(.ok, body(providerId: providerId, query: query, linked: linked))
    }

    /// Where the SDK waits for the result.
    enum App: Equatable {
        /// iOS: the URL scheme the SDK registered (reversed client id, or `app-<appId>`).
        case ios(scheme: String, firebaseHost: Bool)
        /// Android: the app's package.
        case android(package: String)

        /// `nil` without an app, or when the scheme or package it names could be anything but
        /// an app's (a `javascript` scheme, characters that break out of the intent).
        init?(_ query: [String: String]) {
            if let package = query["apn"], !package.isEmpty {
                guard package.utf8.allSatisfy({ Self.isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") })
                else { return nil }
                self = .android(package: package)
            } else if let bundle = query["ibi"], !bundle.isEmpty {
                let scheme: String
                var firebaseHost = true
                if let clientId = query["clientId"], !clientId.isEmpty {
                    scheme = clientId.split(separator: ".").reversed().joined(separator: ".")
                } else if let appId = query["appId"], !appId.isEmpty {
                    scheme = "app-" + appId.replacingOccurrences(of: ":", with: "-")
                } else {
                    scheme = bundle
                    firebaseHost = false
                }
                guard Self.isAppScheme(scheme) else { return nil }
                self = .ios(scheme: scheme, firebaseHost: firebaseHost)
            } else {
                return nil
            }
        }

        /// RFC 3986's scheme characters, and none a browser runs or reads locally.
        static func isAppScheme(_ scheme: String) -> Bool {
            guard let first = scheme.utf8.first, Self.isAlphanumeric(first), first > UInt8(ascii: "9"),
                scheme.utf8.allSatisfy({ Self.isAlphanumeric($0) || "+-.".utf8.contains($0) })
            else { return false }
            return !["javascript", "data", "vbscript", "file", "blob", "about", "http", "https"].contains(scheme.lowercased())
        }

        private static func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }

        /// The deep link (iOS) or intent (Android) that hands the chosen identity to the SDK.
        func link(finishing query: [String: String], providerId: String, origin: String) -> String {
            let response = "\(origin)/emulator/auth/handler?providerId=\(encoded(providerId))&id_token=\(encoded(FakeIdentityProvider.assertedClaims(subject: query["sub"], profile: query)))"
            let authType = query["authType"] ?? "signInWithRedirect"
            switch self {
            case .ios(let scheme, let firebaseHost):
                // Only the callback URL's query matters to the SDK; nothing fetches the page.
                var callback = "\(origin)/__/auth/callback?authType=\(encoded(authType))&link=\(encoded(response))"
                if let eventId = query["eventId"] { callback += "&eventId=\(encoded(eventId))" }
                return "\(scheme)://\(firebaseHost ? "firebaseauth" : "google")/link?deep_link_id=\(encoded(callback))"
            case .android(let package):
                var intent = "intent://firebase.auth/#Intent;scheme=genericidp;package=\(package);S.authType=\(encoded(authType));"
                if let eventId = query["eventId"] { intent += "S.eventId=\(encoded(eventId));" }
                return intent + "S.link=\(encoded(response));B.encryptionEnabled=false;end;"
            }
        }
    }

    private func body(providerId: String, query: [String: String], linked: [ProviderLink]) -> String {
        // Everything the SDK sent rides along, so the finishing request knows where to go.
        let carried = query.filter { !["finish", "sub", "email", "name", "screen_name", "picture"].contains($0.key) }
            .sorted { $0.key < $1.key }
        let base = "/emulator/auth/handler?" + carried.map { "\(encoded($0.key))=\(encoded($0.value))" }.joined(separator: "&")
        var html = "<h1>Sign in with \(escaped(providerId))</h1>"
        html += "<p>Hearth's development identity provider: no real \(escaped(providerId)) account is involved.</p>"
        if linked.isEmpty {
            html += "<p>No \(escaped(providerId)) accounts exist yet.</p>"
        } else {
            html += "<ul>"
            for link in linked {
                var finish = base + "&finish=1&sub=\(encoded(link.federatedId))"
                for (name, value) in [("email", link.email), ("name", link.displayName), ("screen_name", link.screenName), ("picture", link.photoUrl)] {
                    if let value { finish += "&\(name)=\(encoded(value))" }
                }
                let label = link.displayName ?? link.email ?? link.screenName ?? link.federatedId
                html += "<li><a href=\"\(escaped(finish))\">\(escaped(label))</a> \(escaped(link.email ?? ""))</li>"
            }
            html += "</ul>"
        }
        html += "<h2>Add a new account</h2><form method=\"get\" action=\"/emulator/auth/handler\">"
        for (name, value) in carried { html += "<input type=\"hidden\" name=\"\(escaped(name))\" value=\"\(escaped(value))\">" }
        html += "<input type=\"hidden\" name=\"finish\" value=\"1\">"
        for (name, label) in [("email", "Email"), ("name", "Display name"), ("screen_name", "Screen name"), ("picture", "Profile photo URL")] {
            html += "<p><label>\(label) <input name=\"\(name)\"></label></p>"
        }
        return html + "<p><button type=\"submit\">Sign in with \(escaped(providerId))</button></p></form>"
    }

    private func page(_ status: HTTPResponse.Status, _ body: String) -> Response {
        let html = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Hearth identity provider</title>"
            + "<meta name=\"viewport\" content=\"width=device-width\"></head><body>\(body)</body></html>"
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

private func encoded(_ text: String) -> String {
    AuthService.percentEncoded(text)
}

private func escaped(_ text: String) -> String {
    var out = ""
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(character)
        }
    }
    return out
}
