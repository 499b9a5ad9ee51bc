import Hummingbird
import NIOCore

/// Production's way into the console: an admin token, typed once, for a session cookie.
enum ConsoleSignInPage {
    static func response(failed: Bool, status: HTTPResponse.Status = .ok) -> Response {
        let body = """
            <h1>Sign in to the console</h1>\
            \(failed ? "<p class=\"error\" role=\"alert\">That token was not accepted.</p>" : "")\
            <form method="post" action="/console/sign-in"><label>Admin token\
            <input type="password" name="token" autocomplete="off" required autofocus></label>\
            <button type="submit">Sign in</button></form>\
            <p class="muted">An admin token from the daemon's configuration (<code>adminTokens</code>). \
            The session ends after 30 minutes unused, or 12 hours.</p>
            """
        return ConsolePage.response(status, title: "Sign in", project: "", body: body)
    }
}
