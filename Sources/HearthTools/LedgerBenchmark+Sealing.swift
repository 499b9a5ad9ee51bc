import HearthDomain
import HearthStore

/// What sealing personal data costs a durable sign-up (issue 31: at least 95% of before): the
/// same sign-ups, an email, a password hash and a client address each, through the same group
/// commit, into a store that seals them and one that writes them as Hearth did before sealing
/// (format 1, in plain text), alternately, in the same run.
extension LedgerBenchmark {
    /// Sign-ups a second into a sealing store and into an unsealed one, in the order `sealedFirst` says.
    func signUpsSealedAndUnsealed(path: String, sealedFirst: Bool) async throws -> (sealed: Double, unsealed: Double) {
        var sealed = 0.0
        var unsealed = 0.0
        for seals in sealedFirst ? [true, false] : [false, true] {
            var options = AccountStore.Options()
            options.writesBeforeSealing = !seals
            let directory = path + (seals ? "-sealed" : "-unsealed")
            let store = try DataDirectory(directory).open(as: "hearth bench", options: options)
            let rate = try await signUps(store: store)
            store.close()
            removeTree(directory)
            if seals { sealed = rate } else { unsealed = rate }
        }
        return (sealed, unsealed)
    }

    /// A sign-up's writes from `submitters` tasks at once, each in one job as the API records
    /// it (the account created, then signed in); returns sign-ups a second.
    private func signUps(store: AccountStore) async throws -> Double {
        // A stored scrypt hash's sizes; the hashing itself happens before the writer, not in it.
        let password = PasswordHash(
            algorithm: "SCRYPT", hash: [UInt8](repeating: 0x5A, count: 64), salt: [UInt8](repeating: 0xA5, count: 12))
        return try await fromEverySubmitter { submitter, index in
            let uid = UserID("s\(submitter)-\(index)")!
            let metadata = Metadata(actor: .endUser, actorId: uid.rawValue, clientIp: "203.0.113.\(submitter)")
            let created = AccountCreated(
                method: .password, createdAt: store.clock.now(), email: "signup\(submitter)-\(index)@bench.example", password: password)
            _ = try await store.transaction(metadata: metadata) { tx in
                _ = try tx.execute(.createAccount(benchProject, uid, created))
                _ = try tx.execute(.signIn(benchProject, uid, method: "password", refreshTokenHash: "r\(submitter)-\(index)"))
            }
        }
    }
}
