import HTTPTypes
import HearthAuth
import HearthDomain
import Hummingbird

/// What the console changes: each through the same service call as the API's, as the signed-in
/// administrator (`console:<token name>`), so the ledger records who. Every change is a form
/// posted from a console page of this origin, in a live session, with that session's token.
extension ConsoleAPI {
    /// A change's visitor and form, or `nil` to refuse it.
    func change(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> (Visitor, [String: String])? {
        guard request.isSameOrigin, let visitor = try visitor(request, context) else { return nil }
        let form = try await Self.form(request)
        guard visitor.session.accepts(csrf: form["csrf"]) else { return nil }
        return (visitor, form)
    }

    /// `POST /console/users/<uid>/<action>`: edit, disable, enable, revoke, link, delete.
    func changeAccount(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard let (visitor, form) = try await change(request, context) else { return ConsolePage.refused() }
        guard let uid = Self.uid(context), let account = try accounts.account(uid, visitor.caller) else {
            return notFound(visitor)
        }
        let caller = visitor.caller
        do {
            let done: ConsoleOutcome.Change
            switch context.parameters.get("action") {
            case "edit":
                let changes = try Self.changes(form, to: account)
                guard let changes else { return Self.redirect(uid, .unchanged) }
                _ = try await accounts.update(.uid(uid), changes, caller, origin: linkOrigin(request, caller))
                done = .saved
            case "disable", "enable":
                var changes = AccountService.Changes()
                changes.disabled = context.parameters.get("action") == "disable"
                _ = try await accounts.update(.uid(uid), changes, caller, origin: linkOrigin(request, caller))
                done = changes.disabled == true ? .disabled : .enabled
            case "revoke":
                // As the Admin SDK's revokeRefreshTokens: sessions issued before this second end.
                var changes = AccountService.Changes()
                changes.validSince = now() / 1000
                _ = try await accounts.update(.uid(uid), changes, caller, origin: linkOrigin(request, caller))
                done = .revoked
            case "delete":
                guard form["confirm"] == "yes" else { throw FirebaseError.bad("Tick the box to confirm the deletion.") }
                try await accounts.delete(.uid(uid), caller)
                done = .deleted
            case "link":
                let link = try await generateLink(form, for: account, request, caller)
                return try accountPage(visitor, uid: uid, at: nil, outcome: link)
            default:
                return notFound(visitor)
            }
            return Self.redirect(uid, done)
        } catch {
            guard let refusal = Self.refusal(error) else { throw error }
            return try accountPage(visitor, uid: uid, at: nil, outcome: .refused(refusal.message), status: .badRequest)
        }
    }

    /// The edit form's fields that differ from the account, as an update; `nil` if none do.
    static func changes(_ form: [String: String], to account: Account) throws -> AccountService.Changes? {
        var changes = AccountService.Changes()
        var changed = false
        func text(_ name: String) -> String { trimmed(form[name] ?? "") }
        let email = text("email")
        if email != (account.email ?? "") {
            if email.isEmpty { changes.deleteAttributes.append("EMAIL") } else { changes.email = email }
            changed = true
        }
        if let password = form["password"], !password.isEmpty {
            changes.password = password
            changed = true
        }
        let displayName = text("displayName")
        if displayName != (account.displayName ?? "") {
            if displayName.isEmpty { changes.deleteAttributes.append("DISPLAY_NAME") } else { changes.displayName = displayName }
            changed = true
        }
        let photoUrl = text("photoUrl")
        if photoUrl != (account.photoUrl ?? "") {
            if photoUrl.isEmpty { changes.deleteAttributes.append("PHOTO_URL") } else { changes.photoUrl = photoUrl }
            changed = true
        }
        let verified = form["emailVerified"] == "on"
        if verified != account.emailVerified {
            changes.emailVerified = verified
            changed = true
        }
        // Firebase's rules (1,000 characters, no reserved claim) are the service's.
        let claims = text("customClaims")
        if claims != (account.customClaims ?? "") {
            changes.customAttributes = claims
            changed = true
        }
        return changed ? changes : nil
    }

    /// A password-reset, verification or sign-in link for the account's email, shown once on
    /// the page (never emailed: the administrator passes it on).
    private func generateLink(_ form: [String: String], for account: Account, _ request: Request, _ caller: Caller) async throws
        -> ConsoleOutcome
    {
        guard let kind = form["type"].flatMap(ConsoleOutcome.ActionLinkKind.init(rawValue:)),
            let type = OOBCodeIssued.RequestType(rawValue: kind.rawValue)
        else { throw FirebaseError.bad("Choose a kind of link.") }
        guard let email = account.email else { throw FirebaseError.bad("MISSING_EMAIL : The account has no email address.") }
        let continueUrl = form["continueUrl"].map(Self.trimmed).flatMap { $0.isEmpty ? nil : $0 }
        // A sign-in link lands in the app that completes it (the Admin SDK requires one too).
        if type == .emailSignIn, continueUrl == nil {
            throw FirebaseError.bad("MISSING_CONTINUE_URI : A sign-in link needs a continue URL.")
        }
        var linkRequest = ActionCodeService.ActionLinkRequest(
            requestType: type, email: email, returnsLink: true, continueUrl: continueUrl, origin: linkOrigin(request, caller))
        linkRequest.app.canHandleCodeInApp = type == .emailSignIn
        let sent = try await actionCodes.sendActionCode(linkRequest, caller)
        guard let link = sent.link else { throw FirebaseError.bad("The link was not generated.") }
        return .link(kind, link.oobLink)
    }

    /// Links carry an API key the project registered, as Admin SDK links do.
    private func linkOrigin(_ request: Request, _ caller: Caller) -> LinkOrigin {
        LinkOrigin(baseURL: request.baseURL, apiKey: access.linkKey(for: caller.project))
    }

    // MARK: adding a user

    func newUserPage(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        guard let visitor = try visitor(request, context) else { return Self.toSignIn }
        return page(visitor, title: "Add user", body: ConsoleNewUserPage(csrf: visitor.session.csrf).render())
    }

    /// `POST /console/add-user`: the Admin SDK's `createUser`, from the form.
    func addUser(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard let (visitor, form) = try await change(request, context) else { return ConsolePage.refused() }
        func value(_ name: String) -> String? {
            let text = Self.trimmed(form[name] ?? "")
            return text.isEmpty ? nil : text
        }
        var user = AccountService.NewUser()
        user.email = value("email")
        user.password = form["password"].flatMap { $0.isEmpty ? nil : $0 }
        user.displayName = value("displayName")
        user.phoneNumber = value("phoneNumber")
        user.emailVerified = form["emailVerified"] == "on"
        do {
            if let uid = value("uid") {
                guard let valid = UserID(uid) else { throw FirebaseError.bad("INVALID_ID : The uid is not valid.") }
                user.uid = valid
            }
            let account = try await accounts.createUser(user, visitor.caller)
            return Self.redirect(account.uid, .created)
        } catch {
            guard let refusal = Self.refusal(error) else { throw error }
            var page = ConsoleNewUserPage(csrf: visitor.session.csrf)
            page.refusal = refusal.message
            page.values = form.filter { $0.key != "password" && $0.key != "csrf" }
            return self.page(visitor, status: .badRequest, title: "Add user", body: page.render())
        }
    }

    // MARK: helpers

    /// Post, redirect, get: a reload of the page repeats nothing.
    static func redirect(_ uid: UserID, _ done: ConsoleOutcome.Change) -> Response {
        redirect(to: ConsoleAccountPage.path(uid), done)
    }

    /// A change made: back to its page, which names the outcome (`done=`).
    static func redirect(to path: String, _ done: ConsoleOutcome.Change) -> Response {
        Response(status: .seeOther, headers: [.location: path + "?done=" + done.rawValue, .cacheControl: "no-store"])
    }

    /// A change the rules or the input refused, to show on the page; anything else is a fault.
    static func refusal(_ error: any Error) -> FirebaseError? {
        let refused: FirebaseError? =
            switch error {
            case let error as FirebaseError: error
            case let error as AuthError: FirebaseError(error)
            default: nil
            }
        return refused.flatMap { $0.httpStatus < 500 ? $0 : nil }
    }

    static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
