import HearthDomain
import HearthWire

/// The cleanup routes' answers (`GET /hearth/v1/projects/{p}/cleanup[/preview]`), which
/// `hearth cleanup status|preview --json` prints too.
public enum CleanupJSON {
    public static func render(_ status: CleanupStatus) -> JSONValue {
        var body: [String: JSONValue] = [
            "project": .string(status.project.rawValue), "enabled": .bool(status.enabled),
            "periodSeconds": .int(status.periodSeconds), "scheduled": .int(Int64(status.scheduled)),
            "dueNow": .int(Int64(status.dueNow)), "purgedLast30Days": .int(Int64(status.purgedLast30Days)),
            "purgedByDay": days(status.purgedByDay),
        ]
        if let next = status.nextDueAt { body["nextDueAt"] = .string(Timestamp.iso8601(milliseconds: next)) }
        return .object(body)
    }

    public static func render(_ preview: CleanupPreview) -> JSONValue {
        [
            "project": .string(preview.project.rawValue), "enabled": .bool(preview.enabled),
            "periodSeconds": .int(preview.periodSeconds), "wouldSchedule": .int(Int64(preview.wouldSchedule)),
            "alreadyScheduled": .int(Int64(preview.alreadyScheduled)), "dueByDay": days(preview.dueByDay),
        ]
    }

    private static func days(_ counts: [DayCount]) -> JSONValue {
        .array(
            counts.map { count in
                [
                    "day": .string(String(Timestamp.iso8601(milliseconds: count.day * DayCount.millisecondsPerDay).prefix(10))),
                    "accounts": .int(Int64(count.accounts)),
                ]
            })
    }
}
