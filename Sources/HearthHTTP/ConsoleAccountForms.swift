import HearthDomain

/// The forms that change an account, under its details: disable or enable, revoke its
/// sessions, generate an action link, edit, delete. Each posts to `/console/users/<uid>/<action>`
/// with the session's cross-site token; labelled, usable from the keyboard.
struct ConsoleAccountForms {
    var account: Account
    var csrf: String
    /// The kind of link just generated, kept selected.
    var linkKind: ConsoleOutcome.ActionLinkKind?

    func render() -> String {
        var html = "<h2>Actions</h2><div class=\"actions\">"
        html += form(account.disabled ? "enable" : "disable") {
            "<button type=\"submit\">\(account.disabled ? "Enable account" : "Disable account")</button>"
        }
        html += form("revoke") { "<button type=\"submit\">Revoke sessions</button>" }
        html += "</div>"
        if account.email != nil { html += linkForm() }
        html += "<h2>Edit</h2>"
        html += form("edit", class: "stack") {
            field("Email", "email", type: "email", account.email)
                + field("New password (blank: unchanged)", "password", type: "password", nil, autocomplete: "new-password")
                + field("Display name", "displayName", type: "text", account.displayName)
                + field("Photo URL", "photoUrl", type: "text", account.photoUrl)
                + "<label class=\"check\"><input type=\"checkbox\" name=\"emailVerified\" value=\"on\"\(account.emailVerified ? " checked" : "")> Email verified</label>"
                + "<label>Custom claims (JSON, at most 1,000 characters)<textarea name=\"customClaims\" rows=\"3\" maxlength=\"1000\" spellcheck=\"false\">\(HTMLPage.escaped(account.customClaims ?? ""))</textarea></label>"
                + "<button type=\"submit\">Save</button>"
        }
        html += "<h2>Delete</h2>"
        html += form("delete") {
            "<label class=\"check\"><input type=\"checkbox\" name=\"confirm\" value=\"yes\" required> Delete this account; its history stays</label><button type=\"submit\" class=\"danger\">Delete account</button>"
        }
        return html
    }

    /// Generates a password-reset, verification or sign-in link, as the Admin SDK does.
    private func linkForm() -> String {
        var html = "<h2>Action link</h2>"
        html += form("link") {
            var fields = "<label>Link<select name=\"type\">"
            for kind in ConsoleOutcome.ActionLinkKind.allCases {
                fields += "<option value=\"\(kind.rawValue)\"\(linkKind == kind ? " selected" : "")>\(kind.label)</option>"
            }
            fields += "</select></label>"
            fields += field("Continue URL (required for sign-in)", "continueUrl", type: "url", nil)
            return fields + "<button type=\"submit\">Generate</button>"
        }
        return html
    }

    private func form(_ action: String, class className: String? = nil, _ fields: () -> String) -> String {
        let path = HTMLPage.escaped(ConsoleAccountPage.path(account.uid) + "/" + action)
        return "<form method=\"post\" action=\"\(path)\"\(className.map { " class=\"\($0)\"" } ?? "")>"
            + "<input type=\"hidden\" name=\"csrf\" value=\"\(HTMLPage.escaped(csrf))\">\(fields())</form>"
    }

    private func field(_ label: String, _ name: String, type: String, _ value: String?, autocomplete: String = "off") -> String {
        "<label>\(HTMLPage.escaped(label))<input type=\"\(type)\" name=\"\(name)\" value=\"\(HTMLPage.escaped(value ?? ""))\" autocomplete=\"\(autocomplete)\"></label>"
    }
}
