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
    let accounts: AccountService
    let project: ProjectID

    func handle(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let query = QueryString(request).values
        guard let providerId = query["providerId"], !providerId.isEmpty, query["apiKey"].map({ !$0.isEmpty }) == true else {
            return JSONResponse.make(.badRequest, ["authEmulator": ["error": "missing apiKey or providerId query parameters"]])
        }
        // Web popups and redirects need the emulator's iframe relay, which Hearth does not serve.
        guard let app = AppReturn(query) else {
            return page(
                .badRequest,
                "<p>Hearth finishes headful sign-in for the iOS and Android SDKs (<code>ibi</code> or <code>apn</code>). "
                    + "For web apps, sign in with <code>signInWithCredential</code> and a fake credential instead.</p>")
        }
        let origin = request.baseURL
        if query["finish"] == "1" {
            let claims = FakeIdentityProvider.assertedClaims(subject: query["sub"], profile: query)
            let response = "\(origin)/emulator/auth/handler?providerId=\(encoded(providerId))&id_token=\(encoded(claims))"
            let link = app.link(
                .response(response), authType: query["authType"] ?? "signInWithRedirect", eventId: query["eventId"], origin: origin)
            return Response(status: .seeOther, headers: [.location: link])
        }
        let caller = context.developmentCaller(project: project, isAdmin: false)
        let linked = try accounts.accounts(linkedTo: ProviderID(providerId), caller).compactMap { account in
            account.providers.first { $0.providerId.rawValue == providerId }
        }
        return page(.ok, body(providerId: providerId, query: query, linked: linked))
    }

    private func body(providerId: String, query: [String: String], linked: [ProviderLink]) -> String {
        // Everything the SDK sent rides along, so the finishing request knows where to go.
        let carried = query.filter { !["finish", "sub", "email", "name", "screen_name", "picture"].contains($0.key) }
            .sorted { $0.key < $1.key }
        let base = "/emulator/auth/handler?" + carried.map { "\(encoded($0.key))=\(encoded($0.value))" }.joined(separator: "&")
        var html = "<h1>Sign in with \(HTMLPage.escaped(providerId))</h1>"
        html += "<p>Hearth's development identity provider: no real \(HTMLPage.escaped(providerId)) account is involved.</p>"
        if linked.isEmpty {
            html += "<p>No \(HTMLPage.escaped(providerId)) accounts exist yet.</p>"
        } else {
            html += "<ul>"
            for link in linked {
                var finish = base + "&finish=1&sub=\(encoded(link.federatedId))"
                for (name, value) in [
                    ("email", link.email), ("name", link.displayName), ("screen_name", link.screenName), ("picture", link.photoUrl),
                ] {
                    if let value { finish += "&\(name)=\(encoded(value))" }
                }
                let label = link.displayName ?? link.email ?? link.screenName ?? link.federatedId
                html +=
                    "<li><a href=\"\(HTMLPage.escaped(finish))\">\(HTMLPage.escaped(label))</a> \(HTMLPage.escaped(link.email ?? ""))</li>"
            }
            html += "</ul>"
        }
        html += "<h2>Add a new account</h2><form method=\"get\" action=\"/emulator/auth/handler\">"
        for (name, value) in carried {
            html += "<input type=\"hidden\" name=\"\(HTMLPage.escaped(name))\" value=\"\(HTMLPage.escaped(value))\">"
        }
        html += "<input type=\"hidden\" name=\"finish\" value=\"1\">"
        for (name, label) in [
            ("email", "Email"), ("name", "Display name"), ("screen_name", "Screen name"), ("picture", "Profile photo URL"),
        ] {
            html += "<p><label>\(label) <input name=\"\(name)\"></label></p>"
        }
        return html + "<p><button type=\"submit\">Sign in with \(HTMLPage.escaped(providerId))</button></p></form>"
    }

    private func page(_ status: HTTPResponse.Status, _ body: String) -> Response {
        HTMLPage.response(status, title: "Hearth identity provider", body: body)
    }
}

private func encoded(_ text: String) -> String {
    FormEncoding.percentEncoded(text)
}
