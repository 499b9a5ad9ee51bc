/// The overview's key metrics: a few figures read from the text `/metrics` serves (the same
/// rendering, so the console and a Prometheus scrape never disagree), since the daemon started.
/// The operator's only, as `/metrics` is in production: they describe every project's traffic.
struct ConsoleMetrics {
    private struct Series {
        var name: Substring
        var labels: Substring
        var value: Double
    }

    private var series: [Series] = []

    /// Parses Prometheus' text format: `name{labels} value` lines; comments and lines that do
    /// not parse are skipped.
    init(exposition text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let head = line[..<space]
            if let brace = head.firstIndex(of: "{") {
                series.append(Series(name: head[..<brace], labels: head[brace...], value: value))
            } else {
                series.append(Series(name: head, labels: "", value: value))
            }
        }
    }

    /// The sum of a metric's series whose labels contain `label` (all of them by default);
    /// `nil` when it has none.
    func total(_ name: String, label: String = "") -> Double? {
        let matching = series.filter { $0.name == name && (label.isEmpty || $0.labels.contains(label)) }
        return matching.isEmpty ? nil : matching.reduce(0) { $0 + $1.value }
    }

    /// A histogram summed over its series: observations, their mean, and the upper bound of the
    /// bucket that holds the 99th percentile (a histogram knows no finer).
    func histogram(_ name: String) -> (count: Double, mean: Double, p99: Double?)? {
        guard let count = total(name + "_count"), count > 0, let sum = total(name + "_sum") else { return nil }
        var buckets: [Double: Double] = [:]
        for entry in series where entry.name == name + "_bucket" {
            guard let bound = Self.bound(entry.labels) else { continue }
            buckets[bound, default: 0] += entry.value
        }
        let p99 = buckets.keys.sorted().first { buckets[$0, default: 0] >= count * 0.99 }
        return (count, sum / count, p99)
    }

    /// The `le` of a bucket's labels (`{route="signUp",le="0.005"}`).
    private static func bound(_ labels: Substring) -> Double? {
        let pairs = labels.dropFirst().dropLast().split(separator: ",")
        guard let pair = pairs.first(where: { $0.hasPrefix("le=\"") }) else { return nil }
        let value = pair.dropFirst(4).dropLast()
        return value == "+Inf" ? .infinity : Double(value)
    }

    /// Label and figure, for the rows of metrics the daemon has.
    var rows: [(String, String)] {
        var rows: [(String, String)] = []
        if let requests = total("hearth_http_requests_total") {
            let clientErrors = total("hearth_http_requests_total", label: "status=\"4") ?? 0
            let serverErrors = total("hearth_http_requests_total", label: "status=\"5") ?? 0
            rows.append(
                ("Requests answered", "\(Self.count(requests)) (4xx: \(Self.count(clientErrors)), 5xx: \(Self.count(serverErrors)))"))
        }
        if let time = histogram("hearth_http_request_duration_seconds") {
            rows.append(("Request time", Self.timing(time)))
        }
        if let commits = histogram("hearth_writer_commit_duration_seconds") {
            rows.append(("Ledger commits", "\(Self.count(commits.count)); " + Self.timing(commits)))
        }
        if let batches = histogram("hearth_writer_batch_jobs") {
            rows.append(("Writes per commit (group commit)", "mean " + Self.decimal(batches.mean)))
        }
        if let signing = histogram("hearth_token_signing_duration_seconds") {
            rows.append(("Token signing", Self.timing(signing)))
        }
        if let open = total("hearth_connections_open") {
            let refused = (total("hearth_connections_refused_total") ?? 0) + (total("hearth_requests_refused_busy_total") ?? 0)
            rows.append(("Connections open", "\(Self.count(open)) (refused while busy: \(Self.count(refused)))"))
        }
        if let refusals = total("hearth_abuse_refusals_total") { rows.append(("Abuse-limit refusals", Self.count(refusals))) }
        if let waiting = total("hearth_password_hash_queue_waiting") { rows.append(("Password hashes waiting", Self.count(waiting))) }
        if let delivered = total("hearth_mail_delivered_total") {
            let failed = total("hearth_mail_failed_total") ?? 0
            let queued = total("hearth_mail_queue_depth") ?? 0
            rows.append(("Mail", "\(Self.count(delivered)) delivered, \(Self.count(failed)) failed, \(Self.count(queued)) queued"))
        }
        if let purged = total("hearth_cleanup_purged_total") { rows.append(("Anonymous accounts purged", Self.count(purged))) }
        if let used = total("hearth_lmdb_used_bytes"), let map = total("hearth_lmdb_map_bytes"), map > 0 {
            rows.append(("Data file", "\(Self.mebibytes(used)) used of a \(Self.mebibytes(map)) map"))
        }
        if let lag = total("hearth_projection_lag_events") { rows.append(("Projections behind the ledger", "\(Self.count(lag)) events")) }
        if let full = total("hearth_disk_full") { rows.append(("Disk full", full > 0 ? "yes: writes are refused" : "no")) }
        if let leader = total("hearth_cluster_leader") {
            rows.append(("Cluster role", leader > 0 ? "leader" : "follower"))
        }
        return rows
    }

    /// Whole figures; anything no count could be (not finite, negative, past 2^53) is a dash.
    private static func count(_ value: Double) -> String {
        (0...9_007_199_254_740_992).contains(value) ? String(Int64(value)) : "-"
    }

    private static func decimal(_ value: Double) -> String {
        guard (0...900_719_925_474_099).contains(value) else { return "-" }
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func mebibytes(_ bytes: Double) -> String { decimal(bytes / 1_048_576) + " MiB" }

    /// "mean 2.3 ms, 99% within 5 ms".
    private static func timing(_ histogram: (count: Double, mean: Double, p99: Double?)) -> String {
        let mean = "mean " + decimal(histogram.mean * 1000) + " ms"
        guard let p99 = histogram.p99 else { return mean }
        return mean + (p99.isFinite ? ", 99% within " + decimal(p99 * 1000) + " ms" : ", 99% beyond the largest bucket")
    }
}
