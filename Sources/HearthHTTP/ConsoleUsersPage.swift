import HearthDomain
import HearthWire

/// The users table: identifier, providers, created, last sign-in, uid, disabled; a page at a
/// time, in uid order or the most recent first by creation or last sign-in, with a link to the
/// page after the last account shown.
struct ConsoleUsersPage {
    var accounts: [Account]
    var total: Int
    var search: String
    /// `nil`: uid order.
    var order: AccountListOrder?
    /// The next page's `after`, when there may be one.
    var next: String?
    /// A uid searched for whose account was deleted or purged: its history remains.
    var endedAccount: UserID?

    func render() -> String {
        var html = "<h1>Users <span class=\"muted\">(\(total))</span></h1>"
        html += """
            <div class="toolbar"><form method="get" action="/console/users" role="search"><label>Find by email (or its start), phone, uid or provider:id\
            <input name="q" value="\(HTMLPage.escaped(search))" autocomplete="off"></label><button type="submit">Search</button></form>\
            <a class="button" href="/console/add-user">Add user</a></div>
            """
        html += "<div class=\"table\"><table><thead><tr><th>Identifier</th><th>Providers</th>"
        html += "<th class=\"wide\"\(sorted(.creation))>\(sortLink("Created", .creation))</th>"
        html += "<th class=\"wide\"\(sorted(.lastSignIn))>\(sortLink("Signed in", .lastSignIn))</th>"
        html += "<th\(order == nil && search.isEmpty ? " aria-sort=\"ascending\"" : "")>\(sortLink("User UID", nil))</th>"
        html += "<th>Status</th></tr></thead><tbody>"
        for account in accounts {
            let uid = HTMLPage.escaped(account.uid.rawValue)
            let path = HTMLPage.escaped(ConsoleAccountPage.path(account.uid))
            html += "<tr><td>\(HTMLPage.escaped(Self.identifier(account)))</td><td>"
            html += Self.providers(account).map { "<span class=\"tag\">\(HTMLPage.escaped($0))</span>" }.joined()
            html += "</td><td class=\"wide\">\(Self.day(account.createdAt))</td>"
            html += "<td class=\"wide\">\(account.lastSignInAt.map(Self.day) ?? "<span class=\"muted\">never</span>")</td>"
            html += "<td class=\"uid\"><a href=\"\(path)\">\(uid)</a></td>"
            html += "<td>\(account.disabled ? "<span class=\"tag off\">disabled</span>" : "")</td></tr>"
        }
        if let uid = endedAccount {
            let path = HTMLPage.escaped(ConsoleAccountPage.path(uid))
            html += "<tr><td class=\"muted\">(deleted)</td><td></td><td class=\"wide\"></td><td class=\"wide\"></td>"
            html +=
                "<td class=\"uid\"><a href=\"\(path)\">\(HTMLPage.escaped(uid.rawValue))</a></td><td><span class=\"tag off\">deleted</span></td></tr>"
        }
        if accounts.isEmpty && endedAccount == nil {
            html += "<tr><td colspan=\"6\" class=\"muted\">No users\(search.isEmpty ? "" : " match")</td></tr>"
        }
        html += "</tbody></table></div><nav class=\"pager\" aria-label=\"Pages\">"
        if !search.isEmpty { html += "<a href=\"/console/users\">All users</a>" }
        if let next {
            var first: [(name: String, value: String)] = []
            if !search.isEmpty { first.append(("q", search)) }
            if let order { first.append(("sort", order.rawValue)) }
            html += "<a href=\"\(HTMLPage.escaped(Self.link(first)))\">First page</a>"
            html += "<a rel=\"next\" href=\"\(HTMLPage.escaped(Self.link(first + [("after", next)])))\">Next page</a>"
        }
        return html + "</nav>"
    }

    /// A column heading that sorts by it (the most recent first; uid order ascending).
    private func sortLink(_ title: String, _ by: AccountListOrder?) -> String {
        let link = Self.link(by.map { [("sort", $0.rawValue)] } ?? [])
        return "<a href=\"\(HTMLPage.escaped(link))\">\(title)\(order == by && search.isEmpty ? (by == nil ? " ↑" : " ↓") : "")</a>"
    }

    private func sorted(_ by: AccountListOrder) -> String {
        order == by && search.isEmpty ? " aria-sort=\"descending\"" : ""
    }

    static func link(_ fields: [(name: String, value: String)]) -> String {
        fields.isEmpty ? "/console/users" : "/console/users?" + FormEncoding.encode(fields)
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
