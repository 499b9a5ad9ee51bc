import HTTPTypes
import Hummingbird
import NIOCore

/// The console's page frame: server-rendered HTML, every value escaped (`HTMLPage.escaped`), one
/// stylesheet of its own and no script, under a Content-Security-Policy that allows nothing
/// from elsewhere and no framing. `Referrer-Policy: same-origin`, not `no-referrer`: under the
/// latter a browser sends `Origin: null` with the console's own forms, which the console checks.
enum ConsolePage {
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
        .contentSecurityPolicy: "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
        HTTPField.Name("X-Frame-Options")!: "DENY", HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "same-origin",
    ]

    /// `signOut`: the session's cross-site token, for the sign-out form (production).
    /// `switcher`: the projects an operator may look at, and the token for that form.
    static func response(
        _ status: HTTPResponse.Status = .ok, title: String, project: String, body: String, signOut: String? = nil,
        switcher: (projects: [String], csrf: String)? = nil
    ) -> Response {
        let form = signOut.map {
            "<form method=\"post\" action=\"/console/sign-out\" class=\"signout\"><input type=\"hidden\" name=\"csrf\" value=\"\(HTMLPage.escaped($0))\"><button type=\"submit\">Sign out</button></form>"
        }
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1">\
            <title>\(HTMLPage.escaped(title)) · Hearth</title><link rel="stylesheet" href="/console/assets/console.css"></head>\
            <body><header><a class="brand" href="/console/users">Hearth</a>\
            \(switcher.map { projectForm(project, $0.projects, csrf: $0.csrf) } ?? "<span class=\"project\">\(HTMLPage.escaped(project))</span>")\
            <nav><a href="/console">Overview</a><a href="/console/users">Users</a><a href="/console/project">Project</a><a href="/console/cleanup">Cleanup</a></nav>\(form ?? "")</header><main>\(body)</main></body></html>
            """
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// The operator's project choice: a select and its button (no script).
    private static func projectForm(_ current: String, _ projects: [String], csrf: String) -> String {
        var html = "<form method=\"post\" action=\"/console/project-choice\" class=\"choice\">"
        html += "<input type=\"hidden\" name=\"csrf\" value=\"\(HTMLPage.escaped(csrf))\">"
        html += "<label>Project<select name=\"project\">"
        for project in projects {
            html += "<option\(project == current ? " selected" : "")>\(HTMLPage.escaped(project))</option>"
        }
        return html + "</select></label><button type=\"submit\">Show</button></form>"
    }

    /// A change the console did not ask for (no session, another origin, no cross-site token).
    static func refused() -> Response {
        response(.forbidden, title: "Refused", project: "", body: "<h1>Refused</h1><p>That change did not come from a console page.</p>")
    }

    static func stylesheet() -> Response {
        var headers = headers
        headers[.contentType] = "text/css; charset=utf-8"
        headers[.cacheControl] = "public, max-age=3600"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: css)))
    }

    /// Readable on a phone and a desktop; a visible focus for keyboard use.
    static let css = """
        :root { font-family: system-ui, sans-serif; color: #1d1d1f; background: #fafafa; }
        body { margin: 0; }
        header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: baseline; padding: .75rem 1rem; background: #20304a; color: #fff; }
        header a { color: #fff; text-decoration: none; }
        .brand { font-weight: 700; font-size: 1.2rem; }
        .project { opacity: .8; }
        nav { margin-left: auto; display: flex; gap: 1rem; }
        figure.chart { margin: 0 0 1rem; background: #fff; padding: .5rem; } figure.chart svg { width: 100%; height: auto; }
        figcaption { font-size: .85rem; color: #555; }
        fieldset { border: 1px solid #c9ccd3; border-radius: 4px; display: grid; gap: .4rem; }
        main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
        h1 { font-size: 1.4rem; margin: .5rem 0 1rem; }
        h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
        form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin-bottom: 1rem; }
        label { display: flex; flex-direction: column; font-size: .85rem; gap: .2rem; }
        input, button, select, textarea { font: inherit; padding: .4rem .6rem; border: 1px solid #8a8f98; border-radius: 4px; }
        button, a.button { background: #20304a; color: #fff; cursor: pointer; }
        a.button { padding: .4rem .6rem; border-radius: 4px; text-decoration: none; }
        button.danger { background: #9b1c1c; }
        a:focus, input:focus, button:focus, select:focus, textarea:focus { outline: 3px solid #f2a900; outline-offset: 2px; }
        form.stack { display: grid; max-width: 32rem; align-items: stretch; }
        label.check { flex-direction: row; align-items: center; gap: .4rem; font-size: 1rem; }
        .actions, .toolbar { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
        .actions form, .toolbar form { margin-bottom: 0; }
        .toolbar { justify-content: space-between; margin-bottom: 1rem; }
        .wide-field { max-width: 48rem; } .wide-field input { width: 100%; box-sizing: border-box; }
        .notice { background: #e3f1e6; border-left: 4px solid #2e7d32; padding: .5rem .75rem; }
        .table { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; background: #fff; }
        th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #e3e3e8; vertical-align: top; }
        th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: #555; }
        td.uid, code { font-family: ui-monospace, monospace; font-size: .85rem; word-break: break-all; }
        .pager { display: flex; gap: 1rem; margin-top: 1rem; }
        .muted { color: #666; }
        .tag { display: inline-block; padding: 0 .4rem; border-radius: 3px; background: #e8ecf3; font-size: .8rem; margin-right: .25rem; }
        .tag.off { background: #f6d5d5; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; background: #fff; padding: 1rem; margin: 0; }
        dt { color: #555; }
        dd { margin: 0; word-break: break-all; }
        form.choice { margin: 0; flex-direction: row; align-items: center; } form.choice label { flex-direction: row; align-items: center; gap: .4rem; }
        form.choice select, form.choice button { padding: .15rem .4rem; }
        .signout { margin: 0; } .signout button { background: transparent; border-color: #fff; padding: .2rem .5rem; }
        .error { color: #9b1c1c; font-weight: 600; background: #fbe9e9; border-left: 4px solid #9b1c1c; padding: .5rem .75rem; }
        pre { margin: 0; white-space: pre-wrap; word-break: break-all; font-size: .8rem; }
        @media (max-width: 640px) { th.wide, td.wide { display: none; } main { padding: .5rem; } }
        """
}

extension HTTPField.Name {
    static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
}
