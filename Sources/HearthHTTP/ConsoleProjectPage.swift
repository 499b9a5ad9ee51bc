import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// The project: sign-in methods, email privacy, authorized and link domains, registered apps
/// (one form, saved through the v2 config path), the identity providers (never a secret: its
/// fingerprint or file), and every recorded change of the settings.
struct ConsoleProjectPage {
    var project: ProjectID
    var config: ProjectConfig
    var history: [LedgerEntry]
    var csrf: String
    var outcome: ConsoleOutcome?

    /// The settings the form edits: a checkbox per flag, a textarea per list, by v2 path.
    static let flags: [(path: String, label: String)] = [
        ("signIn.email.enabled", "Email/password sign-in"),
        ("signIn.email.passwordRequired", "Email requires a password (off: email-link sign-in too)"),
        ("signIn.anonymous.enabled", "Anonymous sign-in"),
        ("signIn.allowDuplicateEmails", "Allow several accounts with one email"),
        ("emailPrivacyConfig.enableImprovedEmailPrivacy", "Email enumeration protection"),
    ]
    static let lists: [(path: String, label: String)] = [
        ("authorizedDomains", "Authorized domains (one per line)"),
        ("linkDomains", "Link domains (one per line; the first is the default)"),
        ("registeredApps.iosBundleIds", "iOS bundle IDs (one per line)"),
        ("registeredApps.androidPackages", "Android package names (one per line)"),
    ]
    static let jsonLists: [(path: String, label: String)] = [
        ("registeredApps.iosApps", "iOS apps for universal links (JSON: [{\"bundleId\", \"teamId\"}])"),
        ("registeredApps.androidApps", "Android apps for app links (JSON: [{\"packageName\", \"sha256CertFingerprints\"}])"),
    ]

    func render() -> String {
        let current = ProjectConfigJSON.render(config, project: project)
        var html = "<h1>Project <code>\(HTMLPage.escaped(project.rawValue))</code></h1>"
        html += outcome?.html ?? ""
        html += "<h2>Settings</h2><form method=\"post\" action=\"/console/project\" class=\"stack\">"
        html += "<input type=\"hidden\" name=\"csrf\" value=\"\(HTMLPage.escaped(csrf))\">"
        html += "<fieldset><legend>Sign-in methods and privacy</legend>"
        for (path, label) in Self.flags {
            let checked = Self.value(current, path) == .bool(true) ? " checked" : ""
            html +=
                "<label class=\"check\"><input type=\"checkbox\" name=\"\(path)\" value=\"on\"\(checked)> \(HTMLPage.escaped(label))</label>"
        }
        html += "</fieldset>"
        for (path, label) in Self.lists {
            let lines = Self.value(current, path)?.arrayValue?.compactMap(\.stringValue).joined(separator: "\n") ?? ""
            html += textarea(path, label, lines)
        }
        for (path, label) in Self.jsonLists {
            let list = Self.value(current, path) ?? .array([])
            html += textarea(path, label, list.arrayValue?.isEmpty == false ? list.text : "[]")
        }
        html += "<button type=\"submit\">Save settings</button></form>"
        html += providers()
        html += "<h2>Settings history <span class=\"muted\">(\(history.count) changes)</span></h2>"
        return html + ConsoleTimeline.render(history)
    }

    private func textarea(_ path: String, _ label: String, _ text: String) -> String {
        "<label>\(HTMLPage.escaped(label))<textarea name=\"\(path)\" rows=\"3\" spellcheck=\"false\" autocomplete=\"off\">\(HTMLPage.escaped(text))</textarea></label>"
    }

    /// The providers as the v2 API shows them: a secret only by its fingerprint or file.
    private func providers() -> String {
        var html = "<h2>Identity providers</h2><div class=\"table\"><table><thead><tr><th>Provider</th><th>Enabled</th>"
        html += "<th>Client ID</th><th>Client secret</th></tr></thead><tbody>"
        for provider in config.identityProviders {
            let shown = IdentityProviderJSON.render(provider, project: project)
            let secret =
                shown["clientSecretFingerprint"]?.stringValue.map { "fingerprint " + $0 }
                ?? shown["clientSecretFile"]?.stringValue.map { "file " + $0 } ?? "none"
            html += "<tr><td>\(HTMLPage.escaped(provider.providerId.rawValue))</td><td>\(provider.enabled ? "yes" : "no")</td>"
            html += "<td><code>\(HTMLPage.escaped(provider.clientId))</code></td><td>\(HTMLPage.escaped(secret))</td></tr>"
        }
        if config.identityProviders.isEmpty { html += "<tr><td colspan=\"4\" class=\"muted\">None configured</td></tr>" }
        return html
            + "</tbody></table></div><p class=\"muted\">Providers are set through the v2 API or <code>hearth project provider</code>.</p>"
    }

    /// The value at a dotted path of the rendered config.
    static func value(_ root: JSONValue, _ path: String) -> JSONValue? {
        path.split(separator: ".").reduce(Optional(root)) { $0?[String($1)] }
    }
}
