import Testing

@testable import HearthHTTP

/// The overview's key metrics read from `/metrics`' text: sums over series, a histogram's mean
/// and the bucket that holds its 99th percentile, and no row for what the daemon does not record.
@Suite("console: key metrics from /metrics")
struct ConsoleMetricsTests {
    static let exposition = """
        # HELP hearth_http_requests_total Requests.
        # TYPE hearth_http_requests_total counter
        hearth_http_requests_total{route="signUp",status="200"} 97
        hearth_http_requests_total{route="lookup",status="400"} 2
        hearth_http_requests_total{route="signInWithPassword",status="503"} 1
        hearth_http_request_duration_seconds_bucket{route="signUp",le="0.005"} 90
        hearth_http_request_duration_seconds_bucket{route="signUp",le="0.01"} 97
        hearth_http_request_duration_seconds_bucket{route="signUp",le="+Inf"} 97
        hearth_http_request_duration_seconds_sum{route="signUp"} 0.291
        hearth_http_request_duration_seconds_count{route="signUp"} 97
        hearth_http_request_duration_seconds_bucket{route="lookup",le="0.005"} 3
        hearth_http_request_duration_seconds_bucket{route="lookup",le="0.01"} 3
        hearth_http_request_duration_seconds_bucket{route="lookup",le="+Inf"} 3
        hearth_http_request_duration_seconds_sum{route="lookup"} 0.009
        hearth_http_request_duration_seconds_count{route="lookup"} 3
        hearth_writer_batch_jobs_sum 120.0
        hearth_writer_batch_jobs_count 40
        hearth_lmdb_used_bytes 3145728.0
        hearth_lmdb_map_bytes 1073741824.0
        hearth_cleanup_next_due_timestamp_seconds nan
        hearth_disk_full 0.0
        a line that is no metric
        """

    @Test("sums, a histogram's mean and 99th-percentile bucket, and only the rows the daemon records")
    func rows() {
        let metrics = ConsoleMetrics(exposition: Self.exposition)
        #expect(metrics.total("hearth_http_requests_total") == 100)
        #expect(metrics.total("hearth_http_requests_total", label: "status=\"4") == 2)
        let time = metrics.histogram("hearth_http_request_duration_seconds")
        // 93 of 100 within 5 ms, all within 10 ms: the 99th percentile is in the 10 ms bucket.
        #expect(time?.count == 100 && time?.p99 == 0.01)
        let rows = Dictionary(uniqueKeysWithValues: metrics.rows)
        #expect(rows["Requests answered"] == "100 (4xx: 2, 5xx: 1)")
        #expect(rows["Request time"] == "mean 3.0 ms, 99% within 10.0 ms")
        #expect(rows["Writes per commit (group commit)"] == "mean 3.0")
        #expect(rows["Data file"] == "3.0 MiB used of a 1024.0 MiB map")
        #expect(rows["Disk full"] == "no")
        #expect(rows["Ledger commits"] == nil && rows["Mail"] == nil && rows["Cluster role"] == nil)
    }

    @Test("an empty or foreign text gives no rows; a figure no count could be is a dash, never a crash")
    func nothing() {
        #expect(ConsoleMetrics(exposition: "").rows.isEmpty)
        #expect(ConsoleMetrics(exposition: "<html>\nnot metrics\n").rows.isEmpty)
        let odd = ConsoleMetrics(
            exposition: "hearth_cleanup_purged_total 1e300\nhearth_password_hash_queue_waiting -Inf\nhearth_disk_full NaN")
        let rows = Dictionary(uniqueKeysWithValues: odd.rows)
        #expect(rows["Anonymous accounts purged"] == "-" && rows["Password hashes waiting"] == "-")
    }
}
