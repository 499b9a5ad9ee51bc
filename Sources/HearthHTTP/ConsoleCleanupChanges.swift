import HTTPTypes
import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The cleanup page, and its switch: `autodeleteAnonymousUsers` through the v2 config path.
extension ConsoleAPI {
    func cleanup(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard let visitor = try visitor(request, context) else { return Self.toSignIn }
        let done = QueryString(request)["done"].flatMap(ConsoleOutcome.Change.init(rawValue:))
        return try await cleanupPage(visitor, outcome: done.map { .done($0) })
    }

    private func cleanupPage(_ visitor: Visitor, outcome: ConsoleOutcome?, status code: HTTPResponse.Status = .ok) async throws
        -> Response
    {
        let caller = visitor.caller
        let status = try await projects.cleanupStatus(caller)
        let preview = status.enabled ? nil : try await projects.cleanupPreview(caller)
        let page = ConsoleCleanupPage(
            status: status, preview: preview, today: now() / DayCount.millisecondsPerDay, csrf: visitor.session.csrf,
            outcome: outcome)
        return self.page(visitor, status: code, title: "Anonymous cleanup", body: page.render())
    }

    /// `POST /console/cleanup`: on or off.
    func changeCleanup(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard let (visitor, form) = try await change(request, context) else { return ConsolePage.refused() }
        guard let enabled = form["enabled"].flatMap({ ["on": true, "off": false][$0] }) else {
            return try await cleanupPage(visitor, outcome: .refused("Choose on or off."), status: .badRequest)
        }
        let body: JSONValue = ["autodeleteAnonymousUsers": .bool(enabled)]
        _ = try await projects.updateConfig(visitor.caller) { config in
            try ProjectConfigJSON.apply(body, updateMask: "autodeleteAnonymousUsers", to: config)
        }
        let done: ConsoleOutcome.Change = enabled ? .cleanupOn : .cleanupOff
        return Self.redirect(to: "/console/cleanup", done)
    }
}

/// The overview (`/console`).
extension ConsoleAPI {
    func overview(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard let visitor = try visitor(request, context) else { return Self.toSignIn }
        let caller = visitor.caller
        let page = ConsoleOverviewPage(
            overview: try accounts.overview(days: ConsoleOverviewPage.days, caller), today: now() / DayCount.millisecondsPerDay,
            checks: await readiness.checks(), ledger: caller.isOperator ? try projects.ledgerStatus(caller) : nil,
            metrics: caller.isOperator ? ConsoleMetrics(exposition: metrics()).rows : nil)
        return self.page(visitor, title: "Overview", body: page.render())
    }
}
