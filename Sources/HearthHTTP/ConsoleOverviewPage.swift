import HearthAuth
import HearthDomain

/// The overview: accounts, sign-ups and sign-ins per day, accounts by provider, the daemon's
/// readiness, and (for the operator) its key metrics, the ledger's head and its last verification.
struct ConsoleOverviewPage {
    var overview: AccountOverview
    var today: Int64
    var checks: [ReadinessCheck]
    /// The operator's only: the ledger is every project's.
    var ledger: LedgerStatus?
    /// The operator's only, as `/metrics` in production: every project's traffic.
    var metrics: [(String, String)]?
    static let days: Int64 = 30

    func render() -> String {
        var html = "<h1>Overview</h1>"
        let first = today - Self.days + 1
        let signUps = overview.activity.map { DayCount(day: $0.day, accounts: $0.signUps) }
        let signIns = overview.activity.map { DayCount(day: $0.day, accounts: $0.signIns) }
        html += "<dl><dt>Accounts</dt><dd>\(overview.accounts)</dd>"
        html += "<dt>Sign-ups, last 30 days</dt><dd>\(signUps.reduce(0) { $0 + $1.accounts })</dd>"
        html += "<dt>Sign-ins, last 30 days</dt><dd>\(signIns.reduce(0) { $0 + $1.accounts })</dd></dl>"
        html +=
            "<h2>Sign-ups per day</h2>"
            + ConsoleChart.days(signUps, from: first, to: today, label: "Accounts created per day, last 30 days")
        html += "<h2>Sign-ins per day</h2>" + ConsoleChart.days(signIns, from: first, to: today, label: "Sign-ins per day, last 30 days")
        html += "<h2>Accounts by provider</h2>"
        if overview.byProvider.isEmpty {
            html += "<p class=\"muted\">No accounts yet.</p>"
        } else {
            html += ConsoleChart.bars(overview.byProvider.map { ($0.provider, $0.accounts) }, label: "Accounts by sign-in provider")
            html += "<div class=\"table\"><table><thead><tr><th>Provider</th><th>Accounts</th></tr></thead><tbody>"
            for count in overview.byProvider {
                html += "<tr><td>\(HTMLPage.escaped(count.provider))</td><td>\(count.accounts)</td></tr>"
            }
            html += "</tbody></table></div>"
        }
        html += "<h2>Health</h2><div class=\"table\"><table><thead><tr><th>Check</th><th>State</th><th>Detail</th></tr></thead><tbody>"
        for check in checks {
            html +=
                "<tr><td>\(HTMLPage.escaped(check.name))</td><td>\(check.ok ? "<span class=\"tag\">ok</span>" : "<span class=\"tag off\">failing</span>")</td>"
            html += "<td>\(HTMLPage.escaped(ledger == nil ? "" : check.detail ?? ""))</td></tr>"
        }
        html += "</tbody></table></div>"
        if let metrics, !metrics.isEmpty {
            html += "<h2>Key metrics</h2><dl>"
            html += metrics.map { "<dt>\(HTMLPage.escaped($0.0))</dt><dd>\(HTMLPage.escaped($0.1))</dd>" }.joined()
            html += "</dl><p class=\"muted\">Since the daemon started; every figure of <code>/metrics</code> for Prometheus.</p>"
        }
        if let ledger { html += Self.ledger(ledger) }
        return html
    }

    /// The chain's head, and what its last walk found.
    private static func ledger(_ ledger: LedgerStatus) -> String {
        var rows: [(String, String)] = [("Events", "\(ledger.headSequence)"), ("Head hash", ledger.headHash)]
        if let verified = ledger.lastVerification {
            let result =
                verified.intact
                ? "intact: \(verified.eventsChecked) events, head hash \(verified.headHash)"
                : "FAILED at \(verified.failure ?? "an event")"
            rows.append(("Last verified", Timestamp.iso8601(milliseconds: verified.verifiedAt)))
            rows.append(("Result", result))
        } else {
            rows.append(("Last verified", "never: run hearth audit verify"))
        }
        var html = "<h2>Ledger</h2><dl>"
        html += rows.map { "<dt>\(HTMLPage.escaped($0.0))</dt><dd>\(HTMLPage.escaped($0.1))</dd>" }.joined()
        return html + "</dl><p class=\"muted\"><code>hearth audit verify</code> walks the hash chain and records its result here.</p>"
    }
}
