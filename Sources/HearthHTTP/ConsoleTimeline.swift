import HearthAuth
import HearthDomain

/// A stream's events as a table: number, time, type, actor, client address, request id and
/// what it recorded. An account's timeline links each time to the account as of that event.
enum ConsoleTimeline {
    /// `asOf`: the page showing the stream as of an event's time, if there is one.
    static func render(_ entries: [LedgerEntry], asOf: ((Int64) -> String)? = nil) -> String {
        var html = HTMLBuffer(capacity: 1024 + entries.count * 512)
        html.markup("<div class=\"table\"><table><thead><tr><th>#</th><th>Recorded (UTC)</th><th>Event</th><th>Actor</th>")
        html.markup("<th class=\"wide\">Client</th><th class=\"wide\">Request</th><th>Recorded data</th></tr></thead><tbody>")
        for entry in entries {
            let time = Timestamp.iso8601(milliseconds: entry.recordedAt)
            html.markup("<tr><td>\(entry.sequence)</td><td>")
            if let asOf {
                html.markup("<a href=\"")
                html.escaping(asOf(entry.recordedAt))
                html.markup("\" title=\"As of this event\">\(time)</a>")
            } else {
                html.markup(time)
            }
            html.markup("</td><td>")
            html.escaping(entry.type.name)
            html.markup(" <span class=\"muted\">v\(entry.type.version)</span></td><td>")
            html.escaping(actor(entry.metadata))
            html.markup("</td><td class=\"wide\">")
            html.escaping(entry.metadata.clientIp ?? "")
            html.markup("</td><td class=\"wide\"><code>")
            html.escaping(entry.metadata.requestId ?? "")
            html.markup("</code></td><td><pre>")
            html.escaping(entry.payload)
            html.markup(entry.isErased ? "\n(personal data erased)</pre></td></tr>" : "</pre></td></tr>")
        }
        if entries.isEmpty { html.markup("<tr><td colspan=\"7\" class=\"muted\">Nothing recorded yet</td></tr>") }
        html.markup("</tbody></table></div>")
        return html.text
    }

    /// Who: the actor, and which one (`admin: console:ops`).
    static func actor(_ metadata: Metadata) -> String {
        metadata.actorId.map { "\(metadata.actor.rawValue): \($0)" } ?? metadata.actor.rawValue
    }
}
