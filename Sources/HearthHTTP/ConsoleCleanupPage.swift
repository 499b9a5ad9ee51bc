import HearthDomain

/// Anonymous cleanup: on or off, what is scheduled and due, purges per day, and before it is
/// turned on, what turning it on would purge, by day.
struct ConsoleCleanupPage {
    var status: CleanupStatus
    /// Shown while cleanup is off.
    var preview: CleanupPreview?
    var today: Int64
    var csrf: String
    var outcome: ConsoleOutcome?

    func render() -> String {
        var html = "<h1>Anonymous cleanup</h1>" + (outcome?.html ?? "")
        let days = status.periodSeconds % 86_400 == 0 ? "\(status.periodSeconds / 86_400) days" : "\(status.periodSeconds) seconds"
        let rows: [(String, String)] = [
            ("Cleanup", status.enabled ? "on: anonymous accounts are purged \(days) after they were created" : "off"),
            ("Scheduled", "\(status.scheduled)"),
            ("Due now", "\(status.dueNow)"),
            ("Next due", status.nextDueAt.map { Timestamp.iso8601(milliseconds: $0) } ?? "-"),
            ("Purged in the last 30 days", "\(status.purgedLast30Days)"),
        ]
        html += "<dl>" + rows.map { "<dt>\(HTMLPage.escaped($0.0))</dt><dd>\(HTMLPage.escaped($0.1))</dd>" }.joined() + "</dl>"
        html +=
            "<form method=\"post\" action=\"/console/cleanup\"><input type=\"hidden\" name=\"csrf\" value=\"\(HTMLPage.escaped(csrf))\">"
        html += "<input type=\"hidden\" name=\"enabled\" value=\"\(status.enabled ? "off" : "on")\">"
        html +=
            "<button type=\"submit\"\(status.enabled ? " class=\"danger\"" : "")>\(status.enabled ? "Turn cleanup off" : "Turn cleanup on")</button></form>"
        html += "<h2>Purged per day</h2>"
        html += ConsoleChart.days(status.purgedByDay, from: today - 29, to: today, label: "Anonymous accounts purged per day, last 30 days")
        if let preview {
            html += "<h2>Preview: turned on now</h2>"
            html += "<p>\(preview.wouldSchedule) anonymous accounts would be scheduled, each \(days) from now; "
            html += "\(preview.alreadyScheduled) already scheduled keep their dates.</p>"
            if let first = preview.dueByDay.map(\.day).min(), let last = preview.dueByDay.map(\.day).max() {
                html += ConsoleChart.days(
                    preview.dueByDay, from: min(first, today), to: max(last, first + 6), label: "Accounts the cleanup would purge, by day")
            } else {
                html += "<p class=\"muted\">No anonymous accounts: nothing would be purged.</p>"
            }
        }
        return html
    }
}
