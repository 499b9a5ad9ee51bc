import HearthDomain

/// The users table: identifier, providers, created, last sign-in, uid, disabled; a page at a
/// time, in uid order, with the next page after the last uid shown.
enum ConsoleUsersPage {
    static func render(_ accounts: [Account], total: Int, search: String, next: UserID?) -> String {
        var html = "<h1>Users <span class=\"muted\">(\(total))</span></h1>"
        html += """
            <form method="get" action="/console/users" role="search"><label>Find by email, phone, uid or provider:id\
            <input name="q" value="\(HTMLPage.escaped(search))" autocomplete="off"></label><button type="submit">Search</button></form>
            """
        html += "<div class=\"table\"><table><thead><tr><th>Identifier</th><th>Providers</th><th class=\"wide\">Created</th>"
        html += "<th class=\"wide\">Signed in</th><th>User UID</th><th>Status</th></tr></thead><tbody>"
        for account in accounts {
            let uid = HTMLPage.escaped(account.uid.rawValue)
            html += "<tr><td>\(HTMLPage.escaped(identifier(account)))</td><td>"
            html += providers(account).map { "<span class=\"tag\">\(HTMLPage.escaped($0))</span>" }.joined()
            html += "</td><td class=\"wide\">\(day(account.createdAt))</td>"
            html += "<td class=\"wide\">\(account.lastSignInAt.map(day) ?? "<span class=\"muted\">never</span>")</td>"
            html += "<td class=\"uid\"><a href=\"/console/users/\(uid)\">\(uid)</a></td>"
            html += "<td>\(account.disabled ? "<span class=\"tag off\">disabled</span>" : "")</td></tr>"
        }
        if accounts.isEmpty { html += "<tr><td colspan=\"6\" class=\"muted\">No users\(search.isEmpty ? "" : " match")</td></tr>" }
        html += "</tbody></table></div><div class=\"pager\">"
        if !search.isEmpty { html += "<a href=\"/console/users\">All users</a>" }
        if let next {
            html +=
                "<a href=\"/console/users\">First page</a><a rel=\"next\" href=\"/console/users?after=\(HTMLPage.escaped(next.rawValue))\">Next page</a>"
        }
        return html + "</div>"
    }

    static func identifier(_ account: Account) -> String {
        account.email ?? account.phoneNumber ?? (account.isAnonymous ? "(anonymous)" : "-")
    }

    static func providers(_ account: Account) -> [String] {
        var names: [String] = []
        if account.password != nil || account.emailLinkSignIn { names.append("password") }
        if account.phoneNumber != nil { names.append("phone") }
        names += account.providers.map(\.providerId.rawValue)
        if account.isAnonymous { names.append("anonymous") }
        return names
    }

    /// The date and time, to the minute, UTC.
    static func day(_ milliseconds: Int64) -> String {
        let text = Timestamp.iso8601(milliseconds: milliseconds)
        return String(text.prefix(16).map { $0 == "T" ? " " : $0 })
    }
}
