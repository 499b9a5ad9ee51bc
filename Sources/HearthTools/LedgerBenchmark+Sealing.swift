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
    /// it as much as the sealing.
    func signUpsSealedAndUnsealed(path: String) async throws -> (sealed: Double, unsealed: Double) {
        var unsealedOptions = AccountStore.Options()
        unsealedOptions.writesBeforeSealing = true
        let sealed = try DataDirectory(path + "-sealed").open(as: "hearth bench")
        let unsealed = try DataDirectory(path + "-unsealed").open(as: "hearth bench", options: unsealedOptions)
        defer {
            sealed.close()
            unsealed.close()
            removeTree(path + "-sealed")
            removeTree(path + "-unsealed")
        }
        let turns = 8
        let perTurn = max(groupCommitCommands / turns, submitters)
        var seconds = (sealed: 0.0, unsealed: 0.0)
        for turn in 0..<turns {
            for store in turn % 2 == 0 ? [sealed, unsealed] : [unsealed, sealed] {
                let rate = try await signUps(store: store, commands: perTurn, turn: turn)
                if store === sealed { seconds.sealed += Double(perTurn) / rate } else { seconds.unsealed += Double(perTurn) / rate }
            }
        }
        let total = Double(perTurn * turns)
        return (total / seconds.sealed, total / seconds.unsealed)
    }

    /// `commands` sign-ups' writes from `submitters` tasks at once, each in one job as the API
    /// records it (the account created, then signed in); returns sign-ups a second.
    private func signUps(store: AccountStore, commands: Int, turn: Int) async throws -> Double {
        // A stored scrypt hash's sizes; the hashing itself happens before the writer, not in it.
        let password = PasswordHash(
            algorithm: "SCRYPT", hash: [UInt8](repeating: 0x5A, count: 64), salt: [UInt8](repeating: 0xA5, count: 12))
        return try await fromEverySubmitter(commands: commands) { submitter, index in
            let uid = UserID("s\(submitter)-\(turn)-\(index)")!
            let metadata = Metadata(actor: .endUser, actorId: uid.rawValue, clientIp: "203.0.113.\(submitter)")
            let created = AccountCreated(
                method: .password, createdAt: store.clock.now(), email: "signup\(submitter)-\(turn)-\(index)@bench.example",
                password: password)
            _ = try await store.transaction(metadata: metadata) { tx in
                _ = try tx.execute(.createAccount(benchProject, uid, created))
                _ = try tx.execute(.signIn(benchProject, uid, method: "password", refreshTokenHash: "r\(submitter)-\(turn)-\(index)"))
            }
        }
    }
}
