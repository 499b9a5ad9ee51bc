import Foundation
import HearthDomain
import HearthStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `hearth bench ledger`: Hearth's write and rebuild paths against LMDB ceilings measured in
/// the same run, on the same disk (targets are ratios to those ceilings, not absolute numbers,
/// which move from run to run on shared machines).
public struct LedgerBenchmark {
    public var directory: String
    public var rawCommits = 2_000
    public var groupCommitCommands = 20_000
    public var submitters = 64
    /// Submitters for the capacity rows: enough that the batches, not the clients' waits for
    /// their answers, set the rate.
    public var saturatingSubmitters = 1_024
    public var rebuildEvents = 1_000_000
    /// Rounds of each cluster comparison (a cluster row and its ceiling, alternately); the round
    /// with the median ratio is reported, as the host's noise moves single runs by a fifth.
    public var rounds = 3

    public init(directory: String) { self.directory = directory }

    public struct Row: Sendable {
        public var name: String
        public var rate: Double
        public var unit: String
        public var ceiling: String?
        public var ratio: Double?
        /// A target that is not a ratio (a latency bound), shown after the rate.
        public var note: String?

        public init(name: String, rate: Double, unit: String, ceiling: String? = nil, ratio: Double? = nil, note: String? = nil) {
            self.name = name
            self.rate = rate
            self.unit = unit
            self.ceiling = ceiling
            self.ratio = ratio
            self.note = note
        }
    }

    public func run(log: (String) -> Void) async throws -> [Row] {
        removeTree(directory)
        defer { removeTree(directory) }
        log("raw LMDB, one commit (fsync) per 300-byte event …")
        let single = try StoreProbes.rawAppendRate(perCommit: 1, commits: rawCommits, path: directory + "/raw1")
        log("raw LMDB, 100 events per commit …")
        let hundred = try StoreProbes.rawAppendRate(perCommit: 100, commits: max(rawCommits / 4, 50), path: directory + "/raw100")
        log("raw LMDB, 1000 events per commit …")
        let thousand = try StoreProbes.rawAppendRate(perCommit: 1000, commits: 200, path: directory + "/raw1000")
        var commits: [ClusterRound] = []
        var saturated: [ClusterRound] = []
        let load = Load(submitters: submitters, commands: groupCommitCommands)
        let saturating = Load(submitters: saturatingSubmitters, commands: max(groupCommitCommands, saturatingSubmitters * 20))
        var signUps: [SealedSignUps] = []
        for round in 1...max(1, rounds) {
            log("round \(round): durable sign-ups (an email, a password, a client address), sealed and as before sealing …")
            signUps.append(try await signUpsSealedAndUnsealed(path: directory + "/signups-\(round)", round: round))
            commits.append(try await clusterRound(round, load: load, log: log))
            saturated.append(try await clusterRound(round, load: saturating, log: log))
        }
        let (group, batch, synchronous) = Self.medianRound(commits) { $0.synchronous.rate / $0.group }
        let capacity = Self.medianRound(saturated) { $0.synchronous.rate / $0.group }
        let lag = Self.lagPercentiles(commits)
        let capacityLag = Self.lagPercentiles(saturated)
        let sealedSignUps = Self.medianRound(signUps) { $0.sealed / $0.unsealed }
        let signUpJobs = Self.medianRound(signUps) { $0.sealedJob / $0.unsealedJob }
        let writerTime = Self.meanWriterTime(signUps)
        log("building a \(rebuildEvents)-event ledger for the rebuild …")
        let rebuilt = try await rebuildVersusScan(path: directory + "/rebuild", log: log)
        // The rebuild's row is the round the follower's ratio is the median of, against which it is read.
        let (scan, decode, rebuild, sealing) = (rebuilt.scan, rebuilt.decode, rebuilt.applying.sealed, rebuilt.sealing)
        return [
            Row(name: "LMDB commit per event (ceiling)", rate: single, unit: "events/s"),
            Row(name: "LMDB batch of 100", rate: hundred, unit: "events/s"),
            Row(name: "LMDB batch of 1000", rate: thousand, unit: "events/s"),
            Row(
                name: "Hearth group commit (\(submitters) submitters, avg batch \(format1(batch)))", rate: group,
                unit: "commands/s", ceiling: "commit per event", ratio: group / single),
            Row(name: "Durable sign-up, as before sealing (ceiling)", rate: sealedSignUps.unsealed, unit: "sign-ups/s"),
            Row(
                name: "Durable sign-up, personal data sealed", rate: sealedSignUps.sealed, unit: "sign-ups/s",
                ceiling: "sign-up before sealing", ratio: sealedSignUps.sealed / sealedSignUps.unsealed,
                // The writer alone, without the HTTP, the hashing and the signing a sign-up also
                // costs: a stricter measure than the target's (`hearth bench sign-up`).
                note:
                    "the writer alone (target ≥ 95% over HTTP: bench sign-up); median of \(Self.ratios(signUps) { $0.sealed / $0.unsealed })"
            ),
            Row(
                name: "Writer's CPU time per sign-up job, sealed (no commit)", rate: signUpJobs.sealedJob * 1e6, unit: "µs each",
                ceiling: "before sealing", ratio: signUpJobs.sealedJob / signUpJobs.unsealedJob,
                note:
                    "before sealing \(format1(signUpJobs.unsealedJob * 1e6)) µs; ratios \(Self.ratios(signUps) { $0.sealedJob / $0.unsealedJob })"
            ),
            Row(
                name: "Writer per durable sign-up, sealed: its job", rate: writerTime.sealed.runningJobs * 1e6, unit: "µs each",
                ceiling: "before sealing", ratio: writerTime.sealed.runningJobs / writerTime.unsealed.runningJobs,
                note:
                    "before sealing \(format1(writerTime.unsealed.runningJobs * 1e6)) µs; every round's mean; ratios \(Self.ratios(signUps) { $0.sealedWriter.runningJobs / $0.unsealedWriter.runningJobs })"
            ),
            Row(
                name: "Writer per durable sign-up, sealed: its commit", rate: writerTime.sealed.committing * 1e6, unit: "µs each",
                ceiling: "before sealing", ratio: writerTime.sealed.committing / writerTime.unsealed.committing,
                note:
                    "before sealing \(format1(writerTime.unsealed.committing * 1e6)) µs; batches of \(format1(1 / writerTime.sealed.batches)) and \(format1(1 / writerTime.unsealed.batches)); every round's mean; ratios \(Self.ratios(signUps) { $0.sealedWriter.committing / $0.unsealedWriter.committing })"
            ),
            Row(
                name: "Hearth group commit, one synchronous follower", rate: synchronous.rate, unit: "commands/s",
                ceiling: "group commit, one node", ratio: synchronous.rate / group,
                note:
                    "\(submitters) submitters, each waiting for its answer: two fsyncs in turn bound the rate; median of \(Self.ratios(commits) { $0.synchronous.rate / $0.group })"
            ),
            Row(
                name: "Replication lag under that load, p99", rate: lag.p99, unit: "ms",
                note: "p50 \(format1(lag.p50)) ms; \(lag.batches) follower batches, every round's; target p99 < 50 ms"),
            Row(
                name: "Hearth group commit, \(saturatingSubmitters) submitters (avg batch \(format1(capacity.batch)))",
                rate: capacity.group,
                unit: "commands/s"),
            Row(
                name: "The same, one synchronous follower (capacity)", rate: capacity.synchronous.rate, unit: "commands/s",
                ceiling: "group commit, one node, as many submitters", ratio: capacity.synchronous.rate / capacity.group,
                note: "target ≥ 70% of one node; median of \(Self.ratios(saturated) { $0.synchronous.rate / $0.group })"),
            Row(
                name: "Replication lag under that load, p99", rate: capacityLag.p99, unit: "ms",
                note: "p50 \(format1(capacityLag.p50)) ms; \(capacityLag.batches) follower batches, every round's; target p99 < 50 ms"),
            Row(name: "LMDB cursor scan of the ledger (ceiling)", rate: scan, unit: "records/s"),
            Row(name: "Scan + decode every event", rate: decode, unit: "events/s", ceiling: "cursor scan", ratio: decode / scan),
            Row(name: "Projection rebuild", rate: rebuild, unit: "events/s", ceiling: "cursor scan", ratio: rebuild / scan),
            Row(name: "Projection rebuild, the same events unsealed (ceiling)", rate: sealing.unsealed, unit: "events/s"),
            Row(
                name: "Projection rebuild, personal data sealed", rate: sealing.sealed, unit: "events/s", ceiling: "rebuild unsealed",
                ratio: sealing.sealed / sealing.unsealed,
                note: "target ≥ 85% of unsealed; median of \(Self.ratios(rebuilt.rounds) { $0.sealed / $0.unsealed })"),
            Row(
                name: "Follower applying the leader's batches", rate: rebuilt.applying.apply, unit: "events/s",
                ceiling: "projection rebuild",
                ratio: rebuilt.applying.apply / rebuild,
                note: "target ≥ 50% of the rebuild; median of \(Self.ratios(rebuilt.rounds) { $0.apply / $0.sealed })"),
            Row(
                name: "One account's \(historyEvents)-event history, by uid", rate: rebuilt.history * 1e6, unit: "µs each",
                note: "target < 1,000 µs in a \(formatCount(UInt64(rebuildEvents)))-event ledger"),
            Row(
                name: "Key table per account", rate: Double(rebuilt.keys.bytes) / Double(max(rebuilt.keys.live, 1)), unit: "bytes",
                note:
                    "\(formatCount(UInt64(rebuilt.keys.live))) accounts' keys in \(formatCount(UInt64(rebuilt.keys.bytes))) bytes of pages"),
        ]
    }

    /// A cluster round's results: one node's group commit and mean batch, and the synchronous
    /// follower's rate and replication lag (ms, a follower batch each).
    typealias ClusterRound = (group: Double, batch: Double, synchronous: (rate: Double, lags: [Int64]))

    /// How many tasks submit at once, and how many commands in all.
    struct Load {
        var submitters: Int
        var commands: Int
    }

    /// One round of a cluster row and its ceiling at `load`: group commit on one node, then on
    /// a leader with one synchronous follower.
    private func clusterRound(_ round: Int, load: Load, log: (String) -> Void) async throws -> ClusterRound {
        log("round \(round): Hearth group commit, \(load.submitters) concurrent submitters, \(load.commands) commands …")
        let (group, batch) = try await groupCommit(path: directory + "/group-\(round)", load: load)
        log("round \(round): the same on a leader with one synchronous follower …")
        let synchronous = try await synchronousGroupCommit(path: directory + "/synchronous-\(round)", load: load)
        removeTree(directory + "/group-\(round)")
        removeTree(directory + "/synchronous-\(round)")
        removeTree(directory + "/synchronous-\(round)-follower")
        return (group, batch, synchronous)
    }

    private func groupCommit(path: String, load: Load) async throws -> (Double, Double) {
        let store = try DataDirectory(path).open(as: "hearth bench")
        defer { store.close() }
        return try await groupCommit(store: store, load: load)
    }

    /// Sign-ups from `load.submitters` tasks at once: commands a second, and the mean batch.
    func groupCommit(store: AccountStore, load: Load) async throws -> (Double, Double) {
        let metadata = Metadata(actor: .system, actorId: "bench")
        let before = StoreProbes.writerCounts(store)
        let rate = try await fromEverySubmitter(commands: load.commands, submitters: load.submitters) { submitter, index in
            let uid = UserID("g\(submitter)-\(index)")!
            // Created now, as a sign-up is: the creation listing then grows at its end.
            let created = AccountCreated(method: .anonymous, createdAt: store.clock.now())
            _ = try await store.execute(.createAccount(benchProject, uid, created), metadata: metadata)
        }
        let after = StoreProbes.writerCounts(store)
        let batches = Double(after.batches - before.batches)
        return (rate, Double(after.jobs - before.jobs) / max(batches, 1))
    }

    /// Runs `body(submitter, index)` for `commands` (by default `groupCommitCommands`) indexes
    /// shared among `submitters` concurrent tasks, each going through its own in order; returns
    /// the calls a second.
    func fromEverySubmitter(
        commands: Int? = nil, submitters: Int? = nil, _ body: @escaping @Sendable (_ submitter: Int, _ index: Int) async throws -> Void
    ) async throws -> Double {
        let submitters = submitters ?? self.submitters
        let perSubmitter = (commands ?? groupCommitCommands) / submitters
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for submitter in 0..<submitters {
                group.addTask {
                    for index in 0..<perSubmitter { try await body(submitter, index) }
                }
            }
            try await group.waitForAll()
        }
        return Double(perSubmitter * submitters) / seconds(since: start)
    }

    /// One round of the rebuild comparison: each store's rate, and the follower's apply rate.
    struct RebuildRound {
        var sealed: Double
        var unsealed: Double
        var apply: Double
    }

    /// What the rebuild rows report: scan, scan + decode and rebuild rates; the rebuild's
    /// against that of the same events written unsealed (the round with the median ratio); the
    /// rate a follower applies the same ledger at (against its round's rebuild); the seconds one
    /// account's history takes to read (audit replay by uid), and the accounts' keys.
    struct RebuildResults {
        var scan: Double
        var decode: Double
        var rounds: [RebuildRound]
        var sealing: RebuildRound
        var applying: RebuildRound
        var history: Double
        var keys: (live: Int, destroyed: Int, bytes: Int)
    }

    private func rebuildVersusScan(path: String, log: (String) -> Void) async throws -> RebuildResults {
        let store = try DataDirectory(path).open(as: "hearth bench")
        defer { store.close() }
        let uid = UserID("history")!
        // The account of the history read sits in the middle of the ledger, among the others.
        try await DemoLedger.populate(store, events: rebuildEvents / 2)
        try await recordHistory(store, uid)
        try await DemoLedger.populate(store, events: rebuildEvents)
        log("writing the same events again as before sealing (personal data in plain text) …")
        let unsealed = try DataDirectory(path + "-unsealed").open(as: "hearth bench")
        defer { unsealed.close() }
        _ = try StoreProbes.copyBeforeSealing(store, into: unsealed)
        log("scanning \(try store.ledgerHead().sequence) records …")
        let scan = try StoreProbes.scanRate(store)
        let decode = try StoreProbes.scanRate(store, decoding: true)
        var rounds: [RebuildRound] = []
        for round in 1...max(1, self.rounds) {
            log("round \(round): rebuilding, the same unsealed, then a follower applying the ledger in the batches the leader sends …")
            // Each rebuilds twice, in the order A B B A (A sealed in odd rounds, unsealed in even
            // ones). Alternating which went first, alone, left the median of an odd number of
            // rounds with the store that went first more often: one run at 50,000 events read
            // 79-80% in each round the sealed store went first, 94-96% in the others.
            let (first, second) = round % 2 == 1 ? (store, unsealed) : (unsealed, store)
            let opening = try rebuildSeconds(first)
            let middle = try rebuildSeconds(second).seconds + rebuildSeconds(second).seconds
            let firstTurns = try opening.seconds + rebuildSeconds(first).seconds
            // Both stores hold the same events.
            let events = Double(2 * opening.events)
            let (sealed, plain) = round % 2 == 1 ? (firstTurns, middle) : (middle, firstTurns)
            // Both fold the same events into the same projections.
            let sealedDigest = try store.maintenance.digest()
            guard try unsealed.maintenance.digest() == sealedDigest else { throw UnsealedCopyDiffers() }
            let apply = try await followerApplyRate(from: store, path: path + "-follower-\(round)")
            removeTree(path + "-follower-\(round)")
            rounds.append(RebuildRound(sealed: events / sealed, unsealed: events / plain, apply: apply))
        }
        return RebuildResults(
            scan: scan, decode: decode, rounds: rounds,
            sealing: Self.medianRound(rounds) { $0.sealed / $0.unsealed },
            applying: Self.medianRound(rounds) { $0.apply / $0.sealed }, history: try historySeconds(store, uid),
            keys: try StoreProbes.streamKeys(store))
    }

    /// The events rebuilt (all of them), and the seconds it took.
    private func rebuildSeconds(_ store: AccountStore) throws -> (events: UInt64, seconds: Double) {
        // What earlier runs wrote reaches the disk first, not during this one.
        sync()
        let start = ContinuousClock.now
        let rebuilt = try store.maintenance.rebuild()
        return (rebuilt, seconds(since: start))
    }

    /// The round whose ratio is the median.
    static func medianRound<Round>(_ rounds: [Round], by ratio: (Round) -> Double) -> Round {
        rounds.sorted { ratio($0) < ratio($1) }[rounds.count / 2]
    }

    /// Every round's ratio, as percentages: "41%, 47%, 52%".
    static func ratios<Round>(_ rounds: [Round], by ratio: (Round) -> Double) -> String {
        rounds.map { "\(Int((ratio($0) * 100).rounded()))%" }.joined(separator: ", ")
    }

    /// Events a second a follower receives (hashes checked), appends and folds, batch by batch as
    /// its leader sends them (read and encoded beforehand: on two machines the leader reads
    /// while the follower applies), until its projections reach the head. As the replicator
    /// does while catching up, the next batch is received while the last one is appended.
    private func followerApplyRate(from leader: AccountStore, path: String) async throws -> Double {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: leader.directory.ledgerKeyFile, toPath: path + "/ledger-key")
        let follower = try DataDirectory(path).open(as: "hearth bench")
        defer { follower.close() }
        follower.writeAuthority.follow("bench")
        var batches: [ReplicationBatch] = []
        var sent: UInt64 = 0
        let target = try leader.ledgerHead().sequence
        while sent < target {
            let batch = try leader.replication.batch(after: sent)
            batches.append(batch)
            sent += UInt64(batch.records)
        }
        let start = ContinuousClock.now
        var received = try batches.first.map { try ReplicationBatch(received: $0.bytes) }
        for index in batches.indices {
            guard let batch = received else { break }
            let bytes = index + 1 < batches.count ? batches[index + 1].bytes : nil
            async let following = bytes.map { try ReplicationBatch(received: $0) }
            try await follower.replication.apply(batch)
            received = try await following
        }
        // Applied means folded too: the projections serve the follower's reads.
        try await follower.replication.folded()
        return Double(target) / seconds(since: start)
    }

    private let historyEvents = 100

    /// An account whose stream holds exactly `historyEvents` events: created, then sign-ins
    /// (two events each: signed in, refresh token issued), then a profile update.
    private func recordHistory(_ store: AccountStore, _ uid: UserID) async throws {
        let metadata = Metadata(actor: .system, actorId: "bench")
        var commands: [Command] = [.createAccount(benchProject, uid, AccountCreated(method: .anonymous, createdAt: store.clock.now()))]
        for index in 0..<(historyEvents - 2) / 2 {
            commands.append(.signIn(benchProject, uid, method: .anonymous, refreshTokenHash: DemoLedger.tokenHash(0, index)))
        }
        commands.append(.update(benchProject, uid, AccountUpdate(profile: ProfileUpdated(displayName: "History"))))
        for result in try await store.executeAll(commands, metadata: metadata) { _ = try result.get() }
    }

    /// Mean seconds to read and decode one account's whole history through the stream index,
    /// as `hearth audit replay --uid` does.
    private func historySeconds(_ store: AccountStore, _ uid: UserID) throws -> Double {
        let stream = StreamID.account(benchProject, uid)
        let rounds = 1_000
        let start = ContinuousClock.now
        for _ in 0..<rounds {
            let events = try store.audit.events(of: stream)
            precondition(events.count == historyEvents, "the history account has \(events.count) events")
        }
        return seconds(since: start) / Double(rounds)
    }
}

let benchProject = ProjectID("bench")!

/// The ledger written again unsealed folded into other projections than the sealed one: the
/// comparison would not be of the same work.
struct UnsealedCopyDiffers: Error, CustomStringConvertible {
    var description: String { "the unsealed copy of the benchmark's ledger folds into other projections than the ledger itself" }
}

func format1(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

/// Removes the benchmark's scratch directory.
func removeTree(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}
