/// What a console change came to, shown at the top of the page it returns to: a change made
/// (named in the redirect's `done=`, so a reload repeats nothing), a refusal and its reason,
/// or a generated action link (shown once, never put in a URL).
enum ConsoleOutcome: Sendable {
    case done(Change)
    case refused(String)
    case link(ActionLinkKind, String)

    enum Change: String, Sendable {
        case created, saved, unchanged, disabled, enabled, revoked, deleted, cleanupOn, cleanupOff

        var text: String {
            switch self {
            case .created: "The user was created."
            case .saved: "The changes were saved."
            case .unchanged: "Nothing was changed."
            case .disabled: "The account is disabled: it can not sign in, and its sessions no longer refresh."
            case .enabled: "The account is enabled."
            case .revoked: "Every session of the account was revoked: its refresh tokens no longer work."
            case .deleted: "The account was deleted. Its history stays."
            case .cleanupOn: "Anonymous cleanup is on: each anonymous account is purged a period after its creation."
            case .cleanupOff: "Anonymous cleanup is off: nothing more is purged."
            }
        }
    }

    /// The links an administrator may generate, as the Admin SDK's `generate…Link`.
    enum ActionLinkKind: String, Sendable, CaseIterable {
        case passwordReset = "PASSWORD_RESET"
        case verifyEmail = "VERIFY_EMAIL"
        case emailSignIn = "EMAIL_SIGNIN"

        var label: String {
            switch self {
            case .passwordReset: "Password reset"
            case .verifyEmail: "Email verification"
            case .emailSignIn: "Email sign-in"
            }
        }
    }

    /// The page's notice: announced to screen readers, every value escaped.
    var html: String {
        switch self {
        case .done(let change): "<p class=\"notice\" role=\"status\">\(change.text)</p>"
        case .refused(let reason): "<p class=\"error\" role=\"alert\">\(HTMLPage.escaped(reason))</p>"
        case .link(let kind, let url):
            "<div class=\"notice\" role=\"status\"><label class=\"wide-field\">\(kind.label) link, to pass on to the user"
                + "<input id=\"generated-link\" readonly value=\"\(HTMLPage.escaped(url))\"></label></div>"
        }
    }

    /// The kind of link just generated, which its form keeps selected.
    var linkKind: ActionLinkKind? {
        if case .link(let kind, _) = self { kind } else { nil }
    }
}
