import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The console (`/console`), for the people who run a project: its users, paged through the
/// projections, and each account's ledger, with the account as it was at any moment. This
/// first part reads only, and is served in the development profile, open on loopback as the
/// Emulator Suite UI is; production's sign-in comes with its changes (issue 34).
struct ConsoleAPI: Sendable {
    let accounts: AccountService
    let project: ProjectID
    static let pageSize = 50

    /// The console acts as an administrator of the development project, named `console`.
    private var caller: Caller { Caller(project: project, isAdmin: true, adminName: "console") }

    func users(_ request: Request) throws -> Response {
        let query = QueryString(request)
        let search = String((query["q"] ?? "").drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        let found: [Account]
        var next: UserID?
        if !search.isEmpty {
            found = try self.search(search)
        } else {
            let after = query["after"].flatMap { UserID($0) }
            found = try accounts.listAccounts(after: after, limit: Self.pageSize, caller)
            if found.count == Self.pageSize { next = found.last?.uid }
        }
        let total = try accounts.accountCount(caller)
        return ConsolePage.response(
            title: "Users", project: project.rawValue,
            body: ConsoleUsersPage.render(found, total: total, search: search, next: next))
    }

    /// An email, a phone number (`+…`), a provider identity (`provider:id`) or a uid.
    private func search(_ text: String) throws -> [Account] {
        if text.contains("@") { return try accounts.lookup(uids: [], emails: [text], phoneNumbers: [], federated: [], caller) }
        if text.hasPrefix("+") { return try accounts.lookup(uids: [], emails: [], phoneNumbers: [text], federated: [], caller) }
        if let colon = text.firstIndex(of: ":") {
            let identity = (ProviderID(String(text[..<colon])), String(text[text.index(after: colon)...]))
            return try accounts.lookup(uids: [], emails: [], phoneNumbers: [], federated: [identity], caller)
        }
        guard let uid = UserID(text) else { return [] }
        return try accounts.lookup(uids: [uid], emails: [], phoneNumbers: [], federated: [], caller)
    }

    func account(_ request: Request, _ context: some RequestContext) throws -> Response {
        guard let uid = context.parameters.get("uid").flatMap(UserID.init) else { return notFound() }
        let (history, total) = try accounts.history(of: uid, caller)
        let at = QueryString(request)["at"].flatMap(Self.instant)
        let shown = try at.map { try accounts.account(uid, asOf: $0, caller) } ?? accounts.account(uid, caller)
        guard !history.isEmpty || shown != nil else { return notFound() }
        return ConsolePage.response(
            title: uid.rawValue, project: project.rawValue,
            body: ConsoleAccountPage.render(uid: uid, account: shown, at: at, history: history, total: total))
    }

    private func notFound() -> Response {
        ConsolePage.response(
            .notFound, title: "Not found", project: project.rawValue,
            body: "<h1>No such account</h1><p><a href=\"/console/users\">All users</a></p>")
    }

    /// Unix milliseconds, RFC 3339, or a browser's `datetime-local` (taken as UTC).
    static func instant(_ text: String) -> Int64? {
        if let milliseconds = Int64(text) { return milliseconds }
        if let parsed = Timestamp.parse(text) { return parsed }
        return text.count == 16 ? Timestamp.parse(text + ":00Z") : nil
    }
}
