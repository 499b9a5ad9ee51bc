import ArgumentParser
import HearthApp
import HearthAuth
import HearthTools

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks, as ratios to ceilings measured in the same run.",
        subcommands: [Ledger.self, SignUp.self, Cleanup.self, Signing.self])

    /// Runs a benchmark, its progress on stderr, and prints its table on stdout.
    static func report(_ benchmark: (_ log: (String) -> Void) async throws -> [LedgerBenchmark.Row]) async throws {
        let err = Output.standardError
        let rows = try await benchmark { message in
            err.line(message)
            err.flush()
        }
        let out = Output.standardOutput
        out.line(BenchmarkReport.table(rows, allocator: Allocator.description))
        out.flush()
    }

    struct Ledger: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "LMDB commit ceilings vs Hearth group commit; cursor scan vs projection rebuild.")

        @Option(help: "Scratch directory (removed afterwards); must be on the disk you care about.")
        var directory = "/tmp/hearth-bench-\(getpid())"
        @Option(help: "Events in the ledger that is rebuilt.") var events = 1_000_000
        @Option(help: "Commands for the group-commit run.") var commands = 20_000
        @Option(help: "Concurrent submitters for the group-commit run.") var submitters = 64
        @Option(help: "Concurrent submitters for the capacity rows (group commit, one node and with a synchronous follower).")
        var saturatingSubmitters = 1_024
        @Option(help: "Commits for the one-fsync-per-event ceiling.") var commits = 2_000
        @Option(help: "Rounds of each cluster row against its ceiling; the median is reported.") var rounds = 3

        func run() async throws {
            var benchmark = LedgerBenchmark(directory: directory)
            benchmark.rebuildEvents = events
            benchmark.groupCommitCommands = commands
            benchmark.submitters = submitters
            benchmark.saturatingSubmitters = saturatingSubmitters
            benchmark.rawCommits = commits
            benchmark.rounds = rounds
            try await Bench.report(benchmark.run)
        }
    }

    struct Cleanup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Anonymous accounts all due at once, purged by the scheduler while sign-ups run: purges/s vs LMDB, sign-up p99.")

        @Option(help: "Scratch directory (removed afterwards); must be on the disk you care about.")
        var directory = "/tmp/hearth-bench-cleanup-\(getpid())"
        @Option(help: "Anonymous accounts due at once.") var accounts = 1_000_000
        @Option(help: "Concurrent sign-up submitters.") var submitters = 16
        @Option(help: "Accounts per purge transaction.") var batch = 1024
        @Flag(help: "Only build the data directory (kept) with every account due, for Benchmarks/api.py.")
        var prepare = false

        func run() async throws {
            var benchmark = CleanupBenchmark(directory: directory)
            if prepare {
                benchmark.accounts = accounts
                try await benchmark.prepare { Output.standardError.line($0) }
                return
            }
            benchmark.accounts = accounts
            benchmark.signUpSubmitters = submitters
            benchmark.batchSize = batch
            try await Bench.report(benchmark.run)
        }
    }

    struct SignUp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-up",
            abstract:
                "Anonymous durable sign-ups over HTTP (wrk), personal data sealed vs written as before sealing: two servers, turns in alternation."
        )

        @Option(help: "Scratch directory (removed afterwards); must be on the disk you care about.")
        var directory = "/tmp/hearth-bench-sign-up-\(getpid())"
        @Option(help: "Connections wrk keeps open.") var connections = 64
        @Option(help: "Counted turns on each server.") var turns = 8
        @Option(help: "Seconds a turn lasts.") var seconds = 5
        @Option(help: "The ID tokens' signing algorithm: ES256 or RS256.") var algorithm = "ES256"

        func validate() throws {
            guard turns >= 1, seconds >= 1, connections >= 1 else {
                throw ValidationError("--turns, --seconds and --connections: 1 or more")
            }
            guard SigningKey.Algorithm(rawValue: algorithm) != nil else { throw ValidationError("--algorithm: ES256 or RS256") }
        }

        func run() async throws {
            let signing = SigningKey.Algorithm(rawValue: algorithm)!  // `validate` checked it
            var benchmark = SealedSignUpBenchmark(directory: directory)
            benchmark.connections = connections
            benchmark.turns = turns
            benchmark.turnSeconds = seconds
            benchmark.signingAlgorithm = signing
            try await Bench.report { log in
                let result = try await benchmark.run(log: log)
                let turns = result.turnRatios.map { "\(Int(($0 * 100).rounded()))%" }.joined(separator: ", ")
                return [
                    LedgerBenchmark.Row(
                        name: "Anonymous sign-up over HTTP, as before sealing (ceiling)", rate: result.unsealed, unit: "sign-ups/s",
                        note: "\(connections) connections, \(algorithm), durable"),
                    LedgerBenchmark.Row(
                        name: "Anonymous sign-up over HTTP, personal data sealed", rate: result.sealed, unit: "sign-ups/s",
                        ceiling: "sign-up before sealing", ratio: result.sealed / result.unsealed,
                        note: "target ≥ 95% of before; turns \(turns)"),
                ]
            }
        }
    }

    struct Signing: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "RS256 signatures/s: OpenSSL 3 (what Hearth signs with) vs swift-crypto's BoringSSL, one thread and every core.")

        @Option(help: "Seconds per measurement.") var seconds = 3.0

        func run() async throws {
            let threads = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            try await Bench.report { log in
                let rates = try SigningBenchmark.run(seconds: seconds, threads: threads, log: log)
                let ceiling = rates.filter { $0.library.hasPrefix("OpenSSL") }
                return rates.map { rate in
                    let reference = ceiling.first { $0.threads == rate.threads }
                    let isCeiling = rate.library.hasPrefix("OpenSSL")
                    return LedgerBenchmark.Row(
                        name:
                            "RS256 sign, \(rate.library), \(rate.threads) thread\(rate.threads == 1 ? "" : "s")\(isCeiling ? " (ceiling)" : "")",
                        rate: rate.perSecond, unit: "signs/s", ceiling: isCeiling ? nil : "OpenSSL, same threads",
                        ratio: isCeiling ? nil : reference.map { rate.perSecond / $0.perSecond })
                }
            }
        }
    }
}
