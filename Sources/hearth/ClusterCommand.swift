import ArgumentParser
import Foundation
import HearthApp
import HearthCluster
import HearthTools

/// `hearth cluster status`: every node's role, term, head and lag, as etcd holds them.
struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster", abstract: "A cluster of Hearth nodes (a preview: docs/cluster.md).", subcommands: [Status.self])

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
}
