import HearthAuth
import HearthStore
import Prometheus

/// What `/metrics` shows: the counters and histograms recorded through swift-metrics as requests
/// run (requests by route and status, their latency, token signing time, abuse-limit refusals),
/// and gauges read at scrape time from the live parts (ledger head, hashing queue, a full disk).
/// There is no projection lag to show: projections commit in the same transaction as the events.
/// swift-metrics is bootstrapped with this registry by `hearth serve`.
enum MetricsExposition {
    static func render(registry: PrometheusCollectorRegistry, store: AccountStore, service: AuthService) -> String {
        let gauge = { (name: String, help: String, value: Double) in
            registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help)).set(value)
        }
        if let head = try? store.ledgerHead() {
            gauge("hearth_ledger_head_sequence", "The sequence of the ledger's last event.", Double(head.sequence))
        }
        gauge("hearth_password_hash_queue_waiting", "Password hashes waiting for the pool.", Double(service.passwords.waiting))
        gauge("hearth_disk_full", "1 while writes fail on a full disk.", store.writeHealth.diskFullSince == nil ? 0 : 1)
        return registry.emitToString()
    }
}
