import HearthDomain
import HearthStore

/// What sealing personal data costs a durable sign-up (issue 31: at least 95% of before): the
/// same sign-ups, an email, a password hash and a client address each, through the same group
/// commit, into a store that seals them and one that writes them as Hearth did before sealing
/// (format 1, in plain text), side by side in the same run.
extension LedgerBenchmark {
    /// Sign-ups a second into a sealing store and into an unsealed one, open side by side and
    /// fed in turns, the order flipping each turn: the host's drift over a round (page cache,
    /// writeback, other tenants) falls on both alike, where one store after the other measured
    /// it as much as the sealing. Which store opens and goes first flips each round, and each
    /// first takes a turn that is not counted, so that neither is always the one to meet what
    /// the round before left behind (a control with both stores unsealed still reads 97-99%:
    /// that is the method's floor on this host, `docs/benchmarks.md`).
    func signUpsSealedAndUnsealed(path: String, round: Int) async throws -> SealedSignUps {
        var unsealedOptions = AccountStore.Options()
        unsealedOptions.writesBeforeSealing = true
        let sealedFirst = round % 2 == 1
        let first = try DataDirectory(path + (sealedFirst ? "-sealed" : "-unsealed"))
            .open(as: "hearth bench", options: sealedFirst ? AccountStore.Options() : unsealedOptions)
        let second = try DataDirectory(path + (sealedFirst ? "-unsealed" : "-sealed"))
            .open(as: "hearth bench", options: sealedFirst ? unsealedOptions : AccountStore.Options())
        let (sealed, unsealed) = sealedFirst ? (first, second) : (second, first)
        defer {
            sealed.close()
            unsealed.close()
            removeTree(path + "-sealed")
            removeTree(path + "-unsealed")
        }
        let turns = 8
        let perTurn = max(groupCommitCommands / turns, submitters)
        // The uncounted turn's uids are those of a turn after the last.
        for store in [first, second] { _ = try await signUps(store: store, commands: perTurn / 4, turn: turns) }
        var seconds = (sealed: 0.0, unsealed: 0.0)
        let writerBefore = (sealed: WriterTime(sealed), unsealed: WriterTime(unsealed))
        for turn in 0..<turns {
            for store in turn % 2 == 0 ? [first, second] : [second, first] {
                let rate = try await signUps(store: store, commands: perTurn, turn: turn)
                if store === sealed { seconds.sealed += Double(perTurn) / rate } else { seconds.unsealed += Double(perTurn) / rate }
            }
        }
        let total = Double(perTurn * turns)
        let writer = (
            sealed: WriterTime(sealed).perSignUp(since: writerBefore.sealed, signUps: total),
            unsealed: WriterTime(unsealed).perSignUp(since: writerBefore.unsealed, signUps: total)
        )
        let jobs = try signUpJobSeconds(sealed: sealed, unsealed: unsealed)
        return SealedSignUps(
            sealed: total / seconds.sealed, unsealed: total / seconds.unsealed, sealedJob: jobs.sealed, unsealedJob: jobs.unsealed,
            sealedWriter: writer.sealed, unsealedWriter: writer.unsealed)
    }

    /// A round's durable sign-ups a second, the writer's seconds per sign-up job without its
    /// commit (the rolled-back probe), and where the writer's time per durable sign-up went,
    /// into each store.
    struct SealedSignUps {
        var sealed: Double
        var unsealed: Double
        var sealedJob: Double
        var unsealedJob: Double
        var sealedWriter: WriterTime
        var unsealedWriter: WriterTime
    }

    /// The writer's seconds per durable sign-up, running its job and in its batch's commit (its
    /// share of the page writes and fsyncs).
    struct WriterTime {
        var runningJobs: Double
        var committing: Double
        /// Batches (commits) per sign-up.
        var batches: Double

        func perSignUp(since before: WriterTime, signUps: Double) -> WriterTime {
            WriterTime(
                runningJobs: (runningJobs - before.runningJobs) / signUps, committing: (committing - before.committing) / signUps,
                batches: (batches - before.batches) / signUps)
        }
    }
}

extension LedgerBenchmark.WriterTime {
    /// The store's totals so far.
    init(_ store: AccountStore) {
        let seconds = StoreProbes.writerSeconds(store)
        self.init(
            runningJobs: seconds.runningJobs, committing: seconds.committing,
            batches: Double(StoreProbes.writerCounts(store).batches))
    }
}

extension LedgerBenchmark {
    /// Every round's writer time per sign-up, averaged, into each store: the commit's share moves
    /// with the disk from round to round, and a mean over all of them moves least.
    static func meanWriterTime(_ rounds: [SealedSignUps]) -> (sealed: WriterTime, unsealed: WriterTime) {
        let count = Double(max(rounds.count, 1))
        func mean(_ time: (SealedSignUps) -> WriterTime) -> WriterTime {
            WriterTime(
                runningJobs: rounds.reduce(0) { $0 + time($1).runningJobs } / count,
                committing: rounds.reduce(0) { $0 + time($1).committing } / count,
                batches: rounds.reduce(0) { $0 + time($1).batches } / count)
        }
        return (mean(\.sealedWriter), mean(\.unsealedWriter))
    }

    /// The writer's time per sign-up job, without the commit, in each store (the same jobs as
    /// `signUps`, rolled back: `StoreProbes.jobSeconds`): batches of 64 in alternating turns,
    /// each store's fastest batch. CPU-bound work is only ever slowed by what else runs (the
    /// kernel writing back the last round's pages, other tenants), so the minimum is the
    /// estimate that noise moves least.
    private func signUpJobSeconds(sealed: AccountStore, unsealed: AccountStore) throws -> (sealed: Double, unsealed: Double) {
        var seconds = (sealed: Double.infinity, unsealed: Double.infinity)
        let turns = 40
        for turn in 0..<turns {
            for store in turn % 2 == 0 ? [sealed, unsealed] : [unsealed, sealed] {
                let perJob = try StoreProbes.jobSeconds(store, jobs: 64) { index in
                    let (metadata, created) = Self.signUp(submitter: index, turn: turn, index: 0, at: store.clock.now(), prefix: "j")
                    return (
                        metadata,
                        { tx in
                            _ = try tx.execute(.createAccount(benchProject, created.uid, created.event))
                            _ = try tx.execute(.signIn(benchProject, created.uid, method: "password", refreshTokenHash: created.token))
                        }
                    )
                }
                if store === sealed {
                    seconds.sealed = min(seconds.sealed, perJob)
                } else {
                    seconds.unsealed = min(seconds.unsealed, perJob)
                }
            }
        }
        return seconds
    }

    /// One sign-up as the API records it: who, and the account created (an email, a stored
    /// scrypt hash's sizes, a client address), its uid and its session's token hash.
    static func signUp(submitter: Int, turn: Int, index: Int, at now: Int64, prefix: String = "s") -> (
        Metadata, (uid: UserID, event: AccountCreated, token: String)
    ) {
        let name = "\(prefix)\(submitter)-\(turn)-\(index)"
        let uid = UserID(name)!
        let metadata = Metadata(actor: .endUser, actorId: uid.rawValue, clientIp: "203.0.113.\(submitter % 256)")
        let created = AccountCreated(method: .password, createdAt: now, email: "signup-\(name)@bench.example", password: password)
        return (metadata, (uid, created, "r" + name))
    }

    /// A stored scrypt hash's sizes; the hashing itself happens before the writer, not in it.
    static let password = PasswordHash(
        algorithm: "SCRYPT", hash: [UInt8](repeating: 0x5A, count: 64), salt: [UInt8](repeating: 0xA5, count: 12))

    /// `commands` sign-ups' writes from `submitters` tasks at once, each in one job as the API
    /// records it (the account created, then signed in); returns sign-ups a second.
    private func signUps(store: AccountStore, commands: Int, turn: Int) async throws -> Double {
        try await fromEverySubmitter(commands: commands) { submitter, index in
            let (metadata, created) = Self.signUp(submitter: submitter, turn: turn, index: index, at: store.clock.now())
            _ = try await store.transaction(metadata: metadata) { tx in
                _ = try tx.execute(.createAccount(benchProject, created.uid, created.event))
                _ = try tx.execute(.signIn(benchProject, created.uid, method: "password", refreshTokenHash: created.token))
            }
        }
    }
}
