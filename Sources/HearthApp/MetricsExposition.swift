import CoreMetrics
import HearthAuth
import HearthCluster
import HearthHTTP
import HearthMail
import HearthStore
import Prometheus

/// What `/metrics` shows: the counters and histograms recorded through swift-metrics as things
/// happen (requests by route and status and their latency, token signing time, abuse-limit
/// refusals, the writer's batches and commit latency, mail delivered, retried and failed,
/// anonymous accounts purged), and gauges read at scrape time from the live parts (ledger
/// head and bytes, the map's size and use, projection lag, hashing queue, mail queue, the
/// next cleanup, a full disk).
public enum MetricsExposition {
    /// The registry swift-metrics records into, with buckets that fit what Hearth measures; `hearth
    /// serve` bootstraps swift-metrics with it.
    public static func factory() -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: PrometheusMetricsFactory.defaultRegistry)
        factory.valueHistogramBuckets["hearth_writer_batch_jobs"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        factory.durationHistogramBuckets["hearth_writer_commit_duration_seconds"] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .seconds(1),
        ]
        return factory
    }

    /// Records each commit of the writer: the group commit's batch size and its fsync's latency.
    static func observeWriter(of store: AccountStore) {
        let batchJobs = Recorder(label: "hearth_writer_batch_jobs")
        let commitLatency = Timer(label: "hearth_writer_commit_duration_seconds")
        store.observeCommits { jobs, duration in
            batchJobs.record(jobs)
            commitLatency.recordInterval(duration)
        }
    }

    static func render(
        registry: PrometheusCollectorRegistry, store: AccountStore, passwords: PasswordHasher, mailQueue: MailQueue?,
        connections: ConnectionGovernor, cluster: ClusterState?
    ) -> String {
        let gauge = { (name: String, help: String, value: Double) in
            registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help)).set(value)
        }
        if let head = try? store.ledgerHead() {
            gauge("hearth_ledger_head_sequence", "The sequence of the ledger's last event.", Double(head.sequence))
        }
        if let use = try? store.storageUse() {
            gauge("hearth_ledger_bytes", "Bytes of the ledger's pages (events and stream index).", Double(use.ledgerBytes))
            gauge("hearth_lmdb_map_bytes", "LMDB's map size: the data file grows to this before the map is grown.", Double(use.mapBytes))
            gauge("hearth_lmdb_used_bytes", "Bytes of the data file in use (pages up to the last written).", Double(use.usedBytes))
        }
        if let behind = try? store.maintenance.eventsBehind() {
            gauge(
                "hearth_projection_lag_events", "Events the projections have yet to apply (0: they commit with the ledger).", Double(behind)
            )
        }
        // NaN (no value) when nothing is scheduled, never a stale time that looks overdue.
        if let due = try? store.read({ try $0.nextCleanupDue().map { Double($0) / 1000 } ?? .nan }) {
            gauge(
                "hearth_cleanup_next_due_timestamp_seconds",
                "When the next anonymous account falls due for cleanup (NaN: none is scheduled).",
                due)
        }
        gauge("hearth_password_hash_queue_waiting", "Password hashes waiting for the pool.", Double(passwords.waiting))
        if let mailQueue {
            gauge("hearth_mail_queue_depth", "Mail queued, promised room, or waiting to be retried.", Double(mailQueue.depth))
        }
        gauge("hearth_connections_open", "Connections being served.", Double(connections.openConnections))
        gauge(
            "hearth_request_buffered_bytes", "Bytes of requests received and not yet answered (maxBufferedRequestBytes bounds it).",
            Double(connections.bufferedRequestBytes))
        gauge("hearth_disk_full", "1 while writes fail on a full disk.", store.writeHealth.diskFullSince == nil ? 0 : 1)
        if let cluster = cluster?.snapshot {
            gauge("hearth_cluster_leader", "1 while this node leads its cluster.", cluster.role == .leader ? 1 : 0)
            gauge(
                "hearth_cluster_term", "The term this node leads or last saw led (the leader key's etcd revision).",
                Double(cluster.term ?? 0))
            gauge("hearth_cluster_etcd_reachable", "1 while etcd answered this node's last call.", cluster.etcdReachable ? 1 : 0)
            if cluster.role == .leader, let synchronous = cluster.synchronous {
                gauge(
                    "hearth_cluster_synchronous_followers", "Followers that must hold a write before this leader acknowledges it.",
                    Double(synchronous.followers.count))
                gauge(
                    "hearth_cluster_writes_refused_unreplicated",
                    "1 while this leader refuses writes: a write waited past cluster.synchronousTimeoutSeconds unconfirmed.",
                    store.synchronousCommit.isStalled ? 1 : 0)
            }
            if cluster.role == .follower, let leaderHead = cluster.leaderHead, let head = try? store.ledgerHead().sequence {
                gauge(
                    "hearth_cluster_replication_lag_events",
                    "Events the leader had when it last answered that this follower has yet to apply.",
                    Double(leaderHead > head ? leaderHead - head : 0))
            }
            if cluster.role == .follower, let lag = cluster.lagMilliseconds {
                gauge(
                    "hearth_cluster_replication_lag_seconds",
                    "From the leader's recording of the last record this follower applied to its commit here (0: caught up).",
                    Double(lag) / 1000)
            }
        }
        return registry.emitToString()
    }
}

extension Timer {
    fileprivate func recordInterval(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
