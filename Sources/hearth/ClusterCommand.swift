import ArgumentParser
import Foundation
import HearthApp
import HearthCluster
import HearthStore
import HearthTools

/// `hearth cluster status`: every node's role, term, head and lag, as etcd holds them;
/// `hearth cluster join`: a new node's data directory, copied from the leader.
struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster", abstract: "A cluster of Hearth nodes (docs/cluster.md).", subcommands: [Status.self, Join.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The leader and its term, and every node's role, head and lag in events, from etcd.")

        @Option(help: "The node's JSON configuration file, for its `cluster` (default: $HEARTH_CONFIG).")
        var config: String?
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let configuration = try ServerConfiguration.load(
                file: config ?? ProcessInfo.processInfo.environment["HEARTH_CONFIG"], environment: ProcessInfo.processInfo.environment)
            guard let cluster = configuration.cluster else {
                throw ValidationError("the configuration has no cluster: this node runs alone")
            }
            let status = try await ClusterStatus.read(cluster: cluster.name, etcd: cluster.etcd)
            let out = Output.standardOutput
            for line in status.lines(json: json, now: Int64(Date().timeIntervalSince1970 * 1000)) { out.line(line) }
            out.flush()
        }
    }

    struct Join: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fill an empty data directory with a copy of the leader's (its ledger and key files), for a new node.",
            discussion: """
                Streams the leader's hot snapshot (today's hearth backup: the compacted ledger and \
                projections, the ledger key, the signing keys, the secrets key) over the \
                replication channel, with the cluster's credential, into the data directory, which \
                must be empty. Then walks the copy's hash chain. Start the node afterwards: it \
                follows the leader from the copy's head.
                """)

        @Option(help: "The node's JSON configuration file, for its `cluster` (default: $HEARTH_CONFIG).")
        var config: String?
        @OptionGroup var data: DataOptions
        @Option(help: "The leader's URL (default: the one etcd names).")
        var from: String?

        func run() async throws {
            let configuration = try ServerConfiguration.load(
                file: config ?? ProcessInfo.processInfo.environment["HEARTH_CONFIG"], environment: ProcessInfo.processInfo.environment)
            guard let cluster = configuration.cluster else {
                throw ValidationError("the configuration has no cluster: this node runs alone")
            }
            let leaderURL: String
            if let from {
                leaderURL = from
            } else {
                guard let leader = try await ClusterStatus.read(cluster: cluster.name, etcd: cluster.etcd).leader else {
                    throw JoinError.noLeader
                }
                leaderURL = leader.url
            }
            let directory = data.directory
            let start = ContinuousClock.now
            let copying = ProgressBar(label: "copying   (bytes)")
            let summary = try await SnapshotDownload.download(
                from: leaderURL, token: cluster.replicationToken, into: directory.path,
                progress: { copying.update(UInt64($0), of: UInt64(max($0, $1))) })
            copying.finish()
            let verifying = ProgressBar(label: "verifying (events)")
            let store = try directory.openForReading()
            defer { store.close() }
            let verification = try store.audit.verify(progress: verifying.update)
            verifying.finish()
            guard verification.isIntact else { throw JoinError.malformed("the copy's chain does not verify: \(verification)") }
            let head = try store.ledgerHead()
            let out = Output.standardOutput
            out.line("joined \(cluster.name) from \(leaderURL) into \(directory.path)")
            for file in summary.files { out.line("  \(file.name): \(formatCount(UInt64(file.bytes))) bytes") }
            out.line("head: \(head.sequence) (\(head.hash)); chain verified")
            out.line("seconds: \(String(format: "%.1f", seconds(since: start)))")
            out.line("start the node (hearth serve) to follow the leader from there")
            out.flush()
        }
    }
}
