import HearthAuth
import HearthDomain
import Hummingbird

/// The users page: a page of accounts through the projections' indexes (never all of them),
/// in uid order or the most recent first, or what a search finds.
extension ConsoleAPI {
    func users(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        guard let visitor = try visitor(request, context) else { return Self.toSignIn }
        let caller = visitor.caller
        let query = QueryString(request)
        let search = Self.trimmed(query["q"] ?? "")
        let after = query["after"]
        var page = ConsoleUsersPage(
            accounts: [], total: try accounts.accountCount(caller), search: search,
            order: query["sort"].flatMap(AccountListOrder.init(rawValue:)))
        if !search.isEmpty {
            (page.accounts, page.next) = try self.search(search, after: after, caller)
            // A deleted or purged account is still found by its uid, for its history.
            if after == nil, let uid = UserID(search), !page.accounts.contains(where: { $0.uid == uid }),
                try accounts.account(uid, caller) == nil, try accounts.hasHistory(uid, caller)
            {
                page.endedAccount = uid
            }
        } else if let order = page.order {
            page.accounts = try accounts.listAccounts(newestBy: order, after: after.flatMap(Self.position), limit: Self.pageSize, caller)
            if page.accounts.count == Self.pageSize, let last = page.accounts.last, let time = Self.time(of: last, order) {
                page.next = "\(time):\(last.uid.rawValue)"
            }
        } else {
            page.accounts = try accounts.listAccounts(after: after.flatMap(UserID.init), limit: Self.pageSize, caller)
            if page.accounts.count == Self.pageSize { page.next = page.accounts.last?.uid.rawValue }
        }
        return self.page(visitor, title: "Users", body: page.render())
    }

    /// A phone number (`+…`), a provider identity (`provider:id`), the start of an email (with
    /// an `@`, paged by email), or a uid, and the emails that start with it.
    private func search(_ text: String, after: String?, _ caller: Caller) throws -> (found: [Account], next: String?) {
        if text.hasPrefix("+") { return (try accounts.lookup(uids: [], emails: [], phoneNumbers: [text], federated: [], caller), nil) }
        if !text.contains("@"), let colon = text.firstIndex(of: ":") {
            let identity = (ProviderID(String(text[..<colon])), String(text[text.index(after: colon)...]))
            return (try accounts.lookup(uids: [], emails: [], phoneNumbers: [], federated: [identity], caller), nil)
        }
        var found: [Account] = []
        // The uid itself first, on the first page.
        if after == nil, !text.contains("@"), let uid = UserID(text), let account = try accounts.account(uid, caller) {
            found.append(account)
        }
        let byEmail = try accounts.listAccounts(emailPrefix: text, after: after, limit: Self.pageSize, caller)
        found += byEmail.filter { account in !found.contains { $0.uid == account.uid } }
        return (found, byEmail.count == Self.pageSize ? byEmail.last?.email : nil)
    }

    /// `after` of a time-ordered page: `<unix ms>:<uid>`.
    static func position(_ text: String) -> (time: Int64, uid: UserID)? {
        guard let colon = text.firstIndex(of: ":"), let time = Int64(text[..<colon]),
            let uid = UserID(String(text[text.index(after: colon)...]))
        else { return nil }
        return (time, uid)
    }

    private static func time(of account: Account, _ order: AccountListOrder) -> Int64? {
        switch order {
        case .creation: account.createdAt
        case .lastSignIn: account.lastSignInAt
        }
    }
}
