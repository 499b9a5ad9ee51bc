import HearthAuth
import HearthDomain

/// A stream's events as a table: number, time, type, actor, client address, request id and
/// what it recorded. An account's timeline links each time to the account as of that event.
enum ConsoleTimeline {
    /// `asOf`: the page showing the stream as of an event's time, if there is one.
    static func render(_ entries: [LedgerEntry], asOf: ((Int64) -> String)? = nil) -> String {
        var html = "<div class=\"table\"><table><thead><tr><th>#</th><th>Recorded (UTC)</th><th>Event</th><th>Actor</th>"
        html += "<th class=\"wide\">Client</th><th class=\"wide\">Request</th><th>Recorded data</th></tr></thead><tbody>"
        for entry in entries {
            let time = Timestamp.iso8601(milliseconds: entry.recordedAt)
            html += "<tr><td>\(entry.sequence)</td><td>"
            if let asOf {
                html += "<a href=\"\(HTMLPage.escaped(asOf(entry.recordedAt)))\" title=\"As of this event\">\(time)</a>"
            } else {
                html += time
            }
            html += "</td><td>\(HTMLPage.escaped(entry.type.name)) <span class=\"muted\">v\(entry.type.version)</span></td>"
            html += "<td>\(HTMLPage.escaped(actor(entry.metadata)))</td>"
            html += "<td class=\"wide\">\(HTMLPage.escaped(entry.metadata.clientIp ?? ""))</td>"
            html += "<td class=\"wide\"><code>\(HTMLPage.escaped(entry.metadata.requestId ?? ""))</code></td>"
            html += "<td><pre>\(HTMLPage.escaped(entry.payload))\(entry.isErased ? "\n(personal data erased)" : "")</pre></td></tr>"
        }
        if entries.isEmpty { html += "<tr><td colspan=\"7\" class=\"muted\">Nothing recorded yet</td></tr>" }
        return html + "</tbody></table></div>"
    }

    /// Who: the actor, and which one (`admin: console:ops`).
    static func actor(_ metadata: Metadata) -> String {
        metadata.actorId.map { "\(metadata.actor.rawValue): \($0)" } ?? metadata.actor.rawValue
    }
}
