import HearthAPIJSON
import HearthDomain
import HearthWire

/// `hearth cleanup status|preview`'s output: lines for a terminal, or the JSON the HTTP route
/// answers (`GET /hearth/v1/projects/{p}/cleanup[/preview]`).
public enum CleanupReportText {
    public static func lines(_ statuses: [CleanupStatus], json: Bool) -> [String] {
        if json { return statuses.map { CleanupJSON.render($0).text } }
        guard !statuses.isEmpty else { return ["no project has settings of its own: cleanup is off everywhere"] }
        return statuses.flatMap { status in
            [
                "\(status.project): cleanup \(status.enabled ? "on" : "off"), period \(duration(status.periodSeconds))",
                "  scheduled   \(formatCount(UInt64(status.scheduled)))",
                "  due now     \(formatCount(UInt64(status.dueNow)))",
                "  next due    \(status.nextDueAt.map { Timestamp.iso8601(milliseconds: $0) } ?? "-")",
                "  purged in the last 30 days: \(formatCount(UInt64(status.purgedLast30Days)))",
            ] + status.purgedByDay.map { "    \(dayText($0.day))  \(formatCount(UInt64($0.accounts)))" }
        }
    }

    public static func lines(_ preview: CleanupPreview, json: Bool) -> [String] {
        if json { return [CleanupJSON.render(preview).text] }
        // A bar per day, the busiest day 40 characters wide.
        let widest = max(preview.dueByDay.map(\.accounts).max() ?? 1, 1)
        return [
            "\(preview.project): cleanup \(preview.enabled ? "on" : "off"), period \(duration(preview.periodSeconds))",
            "  would schedule     \(formatCount(UInt64(preview.wouldSchedule)))",
            "  already scheduled  \(formatCount(UInt64(preview.alreadyScheduled)))",
        ]
            + preview.dueByDay.map { day in
                let bar = String(repeating: "#", count: max(1, day.accounts * 40 / widest))
                return "    \(dayText(day.day))  \(bar) \(formatCount(UInt64(day.accounts)))"
            }
    }

    private static func dayText(_ day: Int64) -> String {
        String(Timestamp.iso8601(milliseconds: day * DayCount.millisecondsPerDay).prefix(10))
    }

    private static func duration(_ seconds: Int64) -> String {
        seconds % 86_400 == 0 ? "\(seconds / 86_400) days" : "\(seconds) seconds"
    }
}
