import Foundation
import HearthDomain
import HearthScheduler
import HearthStore
import Logging

/// `hearth bench cleanup`: anonymous cleanup's worst day (as 30 days after a project with many
/// anonymous accounts turns it on). A project whose anonymous accounts all fall due at once is
/// purged by the scheduler while sign-ups keep the writer busy. Reported: purges per
/// second against LMDB's own append rate in batches of the scheduler's size (measured in the
/// same run, on the same disk), the time to purge them all, and the sign-ups' latency during
/// the purge against their latency alone.
public struct CleanupBenchmark {
    public var directory: String
    public var accounts = 1_000_000
    /// Concurrent sign-up submitters (each a closed loop: one sign-up job at a time).
    public var signUpSubmitters = 16
    public var batchSize = 1024

    public init(directory: String) { self.directory = directory }

    public func run(log: (String) -> Void) async throws -> [LedgerBenchmark.Row] {
        removeTree(directory)
        defer { removeTree(directory) }
        log("raw LMDB, \(batchSize) events per commit …")
        let ceiling = try StoreProbes.rawAppendRate(perCommit: batchSize, commits: 200, path: directory + "/raw")
        let store = try DataDirectory(directory + "/store").open(as: "hearth bench")
        defer { store.close() }
        try await populate(store, log: log)
        log("sign-ups alone for 5 s …")
        let alone = try await signUps(store, label: "alone", until: { $0 >= 5 })
        let scheduler = CleanupScheduler(
            store: store, clock: SystemClock(), startsAfter: StartSignal(), batchSize: batchSize, logger: Logger(label: "bench"))
        log("purging \(formatCount(UInt64(accounts))) due accounts while \(signUpSubmitters) submitters sign up …")
        let purgeStart = ContinuousClock.now
        async let purged: (count: Int, seconds: Double) = {
            let count = try await scheduler.purgeDue()
            return (count, seconds(since: purgeStart))
        }()
        let during = try await signUps(store, label: "during", until: { _ in false }, whilePurging: true)
        let (total, purgeSeconds) = try await purged
        precondition(total == accounts, "purged \(total) of \(accounts)")
        let purgeRate = Double(total) / purgeSeconds
        return [
            LedgerBenchmark.Row(name: "LMDB batch of \(batchSize) (ceiling)", rate: ceiling, unit: "events/s"),
            LedgerBenchmark.Row(
                name: "Cleanup purge, \(formatCount(UInt64(accounts))) due at once, beside sign-ups", rate: purgeRate,
                unit: "purges/s", ceiling: "batch of \(batchSize)", ratio: purgeRate / ceiling,
                note: "all purged in \(format1(purgeSeconds)) s (target ≤ 20 s)"),
            LedgerBenchmark.Row(
                name: "Sign-ups alone (\(signUpSubmitters) submitters)", rate: alone.rate, unit: "sign-ups/s",
                note: "p99 \(format2(alone.p99 * 1000)) ms"),
            LedgerBenchmark.Row(
                name: "Sign-ups during the purge", rate: during.rate, unit: "sign-ups/s", ceiling: "sign-ups alone",
                ratio: during.rate / alone.rate, note: "p99 \(format2(during.p99 * 1000)) ms (target < 20 ms)"),
        ]
    }

    /// Leaves a data directory whose `accounts` anonymous accounts are all due (for
    /// `Benchmarks/api.py`, which starts the daemon on it and signs up over HTTP while it purges).
    public func prepare(log: (String) -> Void) async throws {
        let store = try DataDirectory(directory).open(as: "hearth bench")
        defer { store.close() }
        try await populate(store, log: log)
    }

    /// `accounts` anonymous accounts, each signed in once, all due a second after the last one
    /// is created; then the period goes back to 30 days, so the benchmark's own sign-ups are not
    /// due during it.
    private func populate(_ store: AccountStore, log: (String) -> Void) async throws {
        let metadata = Metadata(actor: .system, actorId: "bench")
        try await store.execute(
            .changeProjectConfig(benchProject, ProjectConfigChange(anonymousCleanup: true, anonymousCleanupPeriodSeconds: 1)),
            metadata: metadata)
        log("creating \(formatCount(UInt64(accounts))) anonymous accounts …")
        let progress = ProgressBar(label: "populating")
        var created = 0
        while created < accounts {
            let count = min(5_000, accounts - created)
            var commands: [Command] = []
            commands.reserveCapacity(count * 2)
            for index in created..<created + count {
                // Zero-padded: uids sort by creation time, as Hearth's own do (their first
                // characters are the creation time), so accounts fall due in key order.
                let uid = UserID("p" + String(repeating: "0", count: max(0, 9 - String(index).count)) + String(index))!
                commands.append(.createAccount(benchProject, uid, AccountCreated(method: .anonymous, createdAt: 0)))
                commands.append(.signIn(benchProject, uid, method: .anonymous, refreshTokenHash: DemoLedger.tokenHash(index, 0)))
            }
            for result in try await store.executeAll(commands, metadata: metadata) { _ = try result.get() }
            created += count
            progress.update(UInt64(created), of: UInt64(accounts))
        }
        progress.finish()
        try await store.execute(
            .changeProjectConfig(benchProject, ProjectConfigChange(anonymousCleanupPeriodSeconds: 30 * 86_400)),
            metadata: metadata)
        try await Task.sleep(for: .milliseconds(1_100))
    }

    struct Load {
        var rate: Double
        var p99: Double
    }

    /// Closed-loop sign-ups (create + sign in, one transaction) from `signUpSubmitters` tasks,
    /// until `until(elapsed)` or, `whilePurging`, until the schedule is empty.
    private func signUps(
        _ store: AccountStore, label: String, until: @escaping @Sendable (Double) -> Bool, whilePurging: Bool = false
    ) async throws -> Load {
        let metadata = Metadata(actor: .endUser, actorId: "bench")
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for submitter in 0..<signUpSubmitters {
                group.addTask {
                    var samples: [Double] = []
                    var index = 0
                    while true {
                        let elapsed = seconds(since: start)
                        if until(elapsed) { break }
                        if whilePurging, index % 64 == 0,
                            try store.read({ try $0.nextCleanupDue() }).map({ $0 > store.clock.now() }) ?? true
                        {
                            break
                        }
                        let uid = UserID("\(label)\(submitter)-\(index)")!
                        let token = DemoLedger.tokenHash(index, 1)
                        let begun = ContinuousClock.now
                        try await store.transaction(metadata: metadata) { tx in
                            try tx.execute(.createAccount(benchProject, uid, AccountCreated(method: .anonymous, createdAt: tx.now)))
                            try tx.execute(.signIn(benchProject, uid, method: .anonymous, refreshTokenHash: token))
                        }
                        samples.append(seconds(since: begun))
                        index += 1
                    }
                    return samples
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }
        let elapsed = seconds(since: start)
        let sorted = latencies.sorted()
        let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        return Load(rate: Double(latencies.count) / elapsed, p99: p99)
    }
}

func format2(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = String(hundredths % 100)
    return "\(hundredths / 100)." + String(repeating: "0", count: 2 - fraction.count) + fraction
}
