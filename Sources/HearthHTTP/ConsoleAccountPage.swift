import HearthAuth
import HearthDomain
import HearthWire

/// One account: as it is, or as it was at a chosen moment (the same fold as `hearth audit show
/// --at`), and its ledger: every event, who did it, from where, and what it recorded. Shown as
/// it is now, it carries the forms that change it (`ConsoleAccountForms`).
struct ConsoleAccountPage {
    var uid: UserID
    /// The account shown: as of `at`, else now (`nil`: none then, or deleted).
    var account: Account?
    var at: Int64?
    var purge: CleanupSchedule?
    var history: [LedgerEntry]
    var total: Int
    /// The session's cross-site token, which every form carries.
    var csrf: String
    /// What the last change did, or why it was refused.
    var outcome: ConsoleOutcome?

    /// The account page's path: the uid percent-encoded, so any uid (`/`, `?`, `#`) is one segment.
    static func path(_ uid: UserID) -> String {
        "/console/users/" + FormEncoding.percentEncoded(uid.rawValue)
    }

    func render() -> String {
        let path = Self.path(uid)
        let escapedPath = HTMLPage.escaped(path)
        var html = "<h1>Account <code>\(HTMLPage.escaped(uid.rawValue))</code></h1>"
        html += outcome?.html ?? ""
        html += """
            <form method="get" action="\(escapedPath)"><label>As of (UTC)\
            <input type="datetime-local" name="at" step="1"\(at.map { " value=\"\(Self.local($0))\"" } ?? "")></label>\
            <button type="submit">Show</button>\(at == nil ? "" : "<a href=\"\(escapedPath)\">Now</a>")</form>
            """
        html += "<h2>\(at.map { "As of " + HTMLPage.escaped(Timestamp.iso8601(milliseconds: $0)) } ?? "Now")</h2>"
        if let account {
            html += details(account)
            if at == nil { html += ConsoleAccountForms(account: account, csrf: csrf, linkKind: outcome?.linkKind).render() }
        } else {
            html += "<p class=\"muted\">\(at == nil ? "Deleted: its history stays." : "No account at that moment.")</p>"
        }
        return html + timeline(path)
    }

    private func timeline(_ path: String) -> String {
        "<h2>Ledger <span class=\"muted\">(\(total) events\(total > history.count ? ", the last \(history.count) shown" : ""))</span></h2>"
            + ConsoleTimeline.render(history) { "\(path)?at=\($0)" }
    }

    private func details(_ account: Account) -> String {
        var rows: [(String, String)] = [
            ("Identifier", ConsoleUsersPage.identifier(account)),
            ("Providers", ConsoleUsersPage.providers(account).joined(separator: ", ")),
            ("Created", Timestamp.iso8601(milliseconds: account.createdAt)),
            ("Last sign-in", account.lastSignInAt.map { Timestamp.iso8601(milliseconds: $0) } ?? "never"),
            ("Email verified", account.email == nil ? "-" : (account.emailVerified ? "yes" : "no")),
            ("Disabled", account.disabled ? "yes" : "no"),
        ]
        if let name = account.displayName { rows.append(("Display name", name)) }
        if let photo = account.photoUrl { rows.append(("Photo URL", photo)) }
        if let phone = account.phoneNumber { rows.append(("Phone", phone)) }
        if let claims = account.customClaims { rows.append(("Custom claims", claims)) }
        for factor in account.secondFactors {
            rows.append(("Second factor", "\(factor.kind.rawValue) \(factor.displayName ?? "") (\(factor.enrollmentId))"))
        }
        rows.append(("Sessions valid since", Timestamp.iso8601(milliseconds: account.validSince * 1000)))
        if let purge {
            let rule = purge.rule == .createdWhileCleanupOn ? "created while cleanup was on" : "existed when cleanup was turned on"
            rows.append(("Anonymous cleanup", "purged at \(Timestamp.iso8601(milliseconds: purge.dueAt)) (\(rule))"))
        }
        return "<dl>" + rows.map { "<dt>\(HTMLPage.escaped($0.0))</dt><dd>\(HTMLPage.escaped($0.1))</dd>" }.joined() + "</dl>"
    }

    /// A `datetime-local` value: UTC to the second.
    private static func local(_ milliseconds: Int64) -> String {
        String(Timestamp.iso8601(milliseconds: milliseconds).prefix(19))
    }
}
