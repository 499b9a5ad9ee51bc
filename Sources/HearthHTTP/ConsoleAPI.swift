import Foundation
import HTTPTypes
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The console (`/console`), for the people who run a project: its users, paged through the
/// projections, and each account's ledger, with the account as it was at any moment.
///
/// Who may use it: in development anyone on loopback, as the Emulator Suite UI; in production
/// an administrator who signs in with an admin token, which is exchanged for a session cookie
/// (`ConsoleSession`). A project-scoped token sees its project only; what the console does is
/// recorded as `admin` with the id `console:<the token's name>`.
struct ConsoleAPI: Sendable {
    let accounts: AccountService
    let actionCodes: ActionCodeService
    let projects: ProjectService
    /// `/readyz`'s checks, shared with it.
    let readiness: ReadinessCache
    /// `/metrics`' text, for the overview's key metrics.
    let metrics: MetricsExposition
    let access: APIAccess
    let secrets: SecretSealer
    /// Cookies marked `Secure`: the console is reached over TLS (`publicUrl` is https).
    let secureCookies: Bool
    let now: @Sendable () -> Int64
    static let pageSize = 50

    /// Who is using the console, through which session, and the renewed cookie to send.
    struct Visitor {
        var caller: Caller
        var session: ConsoleSession
        var setCookie: String?
        /// The credential, as the configuration has it now.
        var identity: AdminIdentity
    }

    /// The request's visitor, or (no live session in production) `nil`.
    func visitor(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Visitor? {
        let now = now()
        if let value = ConsoleSession.cookieValue(in: request.headers[.cookie]),
            var session = try ConsoleSession.opened(value, by: secrets), session.isLive(at: now),
            let identity = identity(of: session)
        {
            var setCookie: String?
            if now - session.seenAt >= ConsoleSession.renewAfter {
                session.seenAt = now
                setCookie = ConsoleSession.cookie(try session.sealed(by: secrets), secure: secureCookies)
            }
            return try Visitor(
                caller: caller(identity, session, request, context), session: session, setCookie: setCookie, identity: identity)
        }
        guard access.profile == .development else { return nil }
        // Development: open on loopback; a session still, for the forms' cross-site token.
        let session = ConsoleSession.new(tokenDigest: [], now: now)
        return Visitor(
            caller: try caller(Self.developer, session, request, context), session: session,
            setCookie: ConsoleSession.cookie(try session.sealed(by: secrets), secure: secureCookies), identity: Self.developer)
    }

    /// The emulator's owner, whom development's console acts as.
    private static let developer = AdminIdentity(name: "owner", scope: .everyProject)

    /// A session's credential as the configuration has it now: a removed token ends its sessions.
    private func identity(of session: ConsoleSession) -> AdminIdentity? {
        if session.tokenDigest.isEmpty { return access.profile == .development ? Self.developer : nil }
        return access.admin(tokenDigest: session.tokenDigest)
    }

    /// The administrator's project: the one the session chose if the credential covers it, else
    /// a project-scoped token's own, else the default one.
    private func caller(
        _ identity: AdminIdentity, _ session: ConsoleSession, _ request: Request, _ context: some RemoteAddressRequestContext
    ) throws -> Caller {
        let chosen = session.project.flatMap(ProjectID.init).flatMap { identity.scope.covers($0) ? $0 : nil }
        let project = chosen ?? identity.scope.onlyProject ?? access.defaultProject
        guard identity.scope.covers(project) else { throw FirebaseError.permissionDenied }
        let acting = AdminIdentity(name: "console:" + identity.name, scope: identity.scope)
        return access.caller(request, context, project: project, admin: acting)
    }

    // MARK: pages

    func account(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        guard let visitor = try visitor(request, context) else { return Self.toSignIn }
        guard let uid = Self.uid(context) else { return notFound(visitor) }
        let query = QueryString(request)
        let done = query["done"].flatMap(ConsoleOutcome.Change.init(rawValue:))
        return try accountPage(visitor, uid: uid, at: query["at"].flatMap(Self.instant), outcome: done.map { .done($0) })
    }

    func accountPage(
        _ visitor: Visitor, uid: UserID, at: Int64?, outcome: ConsoleOutcome?, status: HTTPResponse.Status = .ok
    ) throws -> Response {
        let caller = visitor.caller
        let (history, total) = try accounts.history(of: uid, caller)
        let shown = try at.map { try accounts.account(uid, asOf: $0, caller) } ?? accounts.account(uid, caller)
        guard !history.isEmpty || shown != nil else { return notFound(visitor) }
        // The purge still to come, on the account as it is now.
        let purge = at == nil && shown?.isAnonymous == true ? try accounts.cleanupSchedule(of: uid, caller) : nil
        let page = ConsoleAccountPage(
            uid: uid, account: shown, at: at, purge: purge, history: history, total: total, csrf: visitor.session.csrf,
            outcome: outcome)
        return self.page(visitor, status: status, title: uid.rawValue, body: page.render())
    }

    /// The `{uid}` of the path, percent-decoded (the console's links encode it).
    static func uid(_ context: some RequestContext) -> UserID? {
        context.parameters.get("uid")?.removingPercentEncoding.flatMap(UserID.init)
    }

    func notFound(_ visitor: Visitor) -> Response {
        page(
            visitor, status: .notFound, title: "Not found",
            body: "<h1>No such account</h1><p><a href=\"/console/users\">All users</a></p>")
    }

    func page(_ visitor: Visitor, status: HTTPResponse.Status = .ok, title: String, body: String) -> Response {
        let choices = visitor.identity.scope == .everyProject ? (try? projectChoices(visitor)) : nil
        var response = ConsolePage.response(
            status, title: title, project: visitor.caller.project.rawValue, body: body,
            signOut: access.profile == .production ? visitor.session.csrf : nil,
            switcher: choices.map { (projects: $0.map(\.rawValue), csrf: visitor.session.csrf) })
        if let cookie = visitor.setCookie { response.headers[.setCookie] = cookie }
        return response
    }

    /// Unix milliseconds, RFC 3339, or a browser's `datetime-local` (taken as UTC).
    static func instant(_ text: String) -> Int64? {
        if let milliseconds = Int64(text) { return milliseconds }
        if let parsed = Timestamp.parse(text) { return parsed }
        switch text.count {
        case 16: return Timestamp.parse(text + ":00Z")  // to the minute
        case 19: return Timestamp.parse(text + "Z")  // to the second (`step="1"`)
        default: return nil
        }
    }

    // MARK: signing in and out

    static let toSignIn = Response(status: .seeOther, headers: [.location: "/console/sign-in", .cacheControl: "no-store"])

    func signInPage(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        if access.profile == .development { return Response(status: .seeOther, headers: [.location: "/console/users"]) }
        return ConsoleSignInPage.response(failed: false)
    }

    /// The token, from the sign-in form; a session cookie for it. The form must come from the
    /// console's own origin (a page elsewhere may not sign a browser in with its own token).
    func signIn(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard access.profile == .production else { return Response(status: .seeOther, headers: [.location: "/console/users"]) }
        guard request.isSameOrigin else { return ConsoleSignInPage.response(failed: true, status: .forbidden) }
        let form = try await Self.form(request)
        guard let token = form["token"], !token.isEmpty, access.admin(tokenDigest: APIAccess.digest(ofToken: token)) != nil else {
            return ConsoleSignInPage.response(failed: true, status: .unauthorized)
        }
        let session = ConsoleSession.new(tokenDigest: APIAccess.digest(ofToken: token), now: now())
        return Response(
            status: .seeOther,
            headers: [
                .location: "/console/users", .cacheControl: "no-store",
                .setCookie: ConsoleSession.cookie(try session.sealed(by: secrets), secure: secureCookies),
            ])
    }

    func signOut(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard request.isSameOrigin, let visitor = try visitor(request, context),
            visitor.session.accepts(csrf: try await Self.form(request)["csrf"])
        else { return ConsolePage.refused() }
        return Response(
            status: .seeOther,
            headers: [
                .location: "/console/sign-in", .cacheControl: "no-store",
                .setCookie: ConsoleSession.cookie("", secure: secureCookies, maxAge: 0),
            ])
    }

    /// A form's fields (at most 16 KiB of them: custom claims, escaped, are the longest).
    static func form(_ request: Request) async throws -> [String: String] {
        let buffer = try await request.body.collect(upTo: 16 * 1024)
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else { return [:] }
        var fields: [String: String] = [:]
        for (name, value) in FormEncoding.fields(text) { fields[name] = value }
        return fields
    }

}
