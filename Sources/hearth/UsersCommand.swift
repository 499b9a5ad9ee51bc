import ArgumentParser
import HearthDomain
import HearthStore
import HearthTools
import HearthWire

/// `hearth users export|import|erase`: a project's users in and out, in `firebase auth:export`'s
/// JSON; one user's personal data forgotten on request.
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move a project's users out of or into Hearth (firebase auth:export / auth:import JSON); erase one on request.",
        subcommands: [Export.self, Import.self, Erase.self])

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget one user's personal data on request (right to erasure), through the running daemon.",
            discussion: """
                The account's key is destroyed in the same write as an account.erased event that records the admin \
                and the reason, and the account ends as a deletion ends it. Its history keeps its shape (types, \
                times, actors) and the chain still verifies; its personal data can no longer be read. The reason is \
                kept forever: give a ticket reference, not personal data.
                """)

        @OptionGroup var daemon: DaemonOptions
        @OptionGroup var project: Audit.ProjectOption
        @Option(help: "The account to erase.") var uid: UserID
        @Option(help: "Why (1-200 characters, kept forever), e.g. a ticket reference.") var reason: String

        func run() throws {
            let path = "/hearth/v1/projects/\(project.project)/accounts/\(FormEncoding.percentEncoded(uid.rawValue))/erase"
            let answer = try daemon.call("POST", path, .object(["reason": .string(reason)]))
            let out = Output.standardOutput
            out.line("erased \(uid) in \(project.project): its personal data can no longer be read")
            out.flush()
            if answer["plainTextHistoryRemains"] == .bool(true) {
                let err = Output.standardError
                err.line(
                    "warning: this ledger still holds events recorded before per-account keys, in plain text, which no erasure reaches: stop the daemon and run `hearth ledger seal` to rewrite them (docs/operations.md#personal-data)"
                )
                err.flush()
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a project's users as firebase auth:export's JSON (reads the data directory; safe beside the daemon).",
            discussion: """
                Password hashes and salts are in standard base64, with the hash parameters at the top of the file \
                (hashConfig, named as firebase auth:import's flags), so hearth users import needs no flags. The file \
                holds password hashes: it is created owner-only.
                """)

        @OptionGroup var data: DataOptions
        @OptionGroup var project: Audit.ProjectOption
        @Option(help: "One person's data (with --history), for a subject-access request.") var uid: UserID?
        @Flag(
            help:
                "With --uid: the account, every event of its history and of the action codes issued for it, personal data opened, as JSON.")
        var history = false
        @Flag(
            help:
                "Write TOTP second factors' secrets (totpInfo.sharedSecretKey), so that they keep working in the Hearth the file is imported into. Without it, such users must enrol again there."
        )
        var includeTotpSecrets = false
        @Argument(help: "The JSON file to write (a new file or a regular one to replace), or - for standard output.") var file: String

        func validate() throws {
            if (uid == nil) != !history { throw ValidationError("--uid and --history go together (a subject-access export)") }
            if history && includeTotpSecrets { throw ValidationError("--include-totp-secrets is for a whole project's export") }
        }

        /// The summary goes to standard error when the export itself goes to standard output.
        private var summaryOutput: Output { file == "-" ? .standardError : .standardOutput }
        private var destination: String { file == "-" ? "standard output" : file }

        func run() throws {
            if let uid {
                try data.directory.reading { store in
                    let progress = ProgressBar(label: "finding action codes")
                    let events = try UsersExport.writeHistory(
                        store, project: project.project, uid: uid, to: file, progress: progress.update)
                    progress.finish()
                    let out = summaryOutput
                    out.line("exported \(uid) of \(project.project) with \(events) events to \(destination)")
                    out.flush()
                }
                return
            }
            try data.directory.reading { store in
                let progress = ProgressBar(label: "exporting")
                let summary = try UsersExport.write(
                    store, project: project.project, to: file, totpSecrets: includeTotpSecrets, progress: progress.update)
                progress.finish()
                let out = summaryOutput
                out.line("exported \(formatCount(UInt64(summary.users))) users of \(project.project) to \(destination)")
                out.line("with password: \(formatCount(UInt64(summary.withPassword)))")
                if summary.hashesLeftOut > 0 { out.line("hashes left out (no importable format): \(summary.hashesLeftOut)") }
                if summary.withSecondFactors > 0 {
                    out.line(
                        "with second factors: \(formatCount(UInt64(summary.withSecondFactors))) (TOTP secrets written: \(summary.totpSecrets))"
                    )
                }
                out.line("seconds: \(format3(summary.seconds))")
                out.flush()
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a firebase auth:export JSON file into a project through the running daemon.",
            discussion: """
                Takes firebase auth:import's hash flags. A file written by hearth users export records its hash \
                parameters and needs none. Every user is checked before any is sent; users the daemon refuses (an \
                existing uid or email) are listed and the rest imported. The daemon's address and an admin token \
                come from the config file serve uses (--config or $HEARTH_CONFIG), unless given.
                """)

        @OptionGroup var daemon: DaemonOptions
        @OptionGroup var project: Audit.ProjectOption
        @Argument(help: "The JSON file (firebase auth:export's format).") var file: String

        @Option(
            name: .customLong("hash-algo"),
            help:
                "SCRYPT (Firebase's), STANDARD_SCRYPT, BCRYPT, PBKDF2_SHA256, PBKDF_SHA1, HMAC_SHA512, HMAC_SHA256, HMAC_SHA1 or HMAC_MD5.")
        var hashAlgorithm: String?
        @Option(name: .customLong("hash-key"), help: "The hash key (SCRYPT's signer key, HMAC's key), in base64.")
        var hashKey: String?
        @Option(name: .customLong("salt-separator"), help: "SCRYPT's salt separator, in base64.")
        var saltSeparator: String?
        @Option(help: "Rounds (SCRYPT 1-8, PBKDF2 0-120000).") var rounds: Int?
        @Option(name: .customLong("mem-cost"), help: "Memory cost (SCRYPT 1-14; STANDARD_SCRYPT's N).") var memoryCost: Int?
        @Option(help: "STANDARD_SCRYPT's parallelization.") var parallelization: Int?
        @Option(name: .customLong("block-size"), help: "STANDARD_SCRYPT's block size.") var blockSize: Int?
        @Option(name: .customLong("dk-len"), help: "STANDARD_SCRYPT's derived key length.") var derivedKeyLength: Int?
        @Option(name: .customLong("hash-input-order"), help: "SALT_FIRST or PASSWORD_FIRST (HMAC).") var hashInputOrder: String?

        func run() throws {
            var options = UsersImport.Options(project: project.project, hashConfig: try hashConfig())
            options.concurrency = 4
            let checking = ProgressBar(label: "checking  (bytes)")
            let progress = ProgressBar(label: "importing (users)")
            let summary: UsersImport.Summary
            do {
                summary = try UsersImport.run(
                    file: file, options: options, daemon: try daemon.client(), checking: checking.update,
                    progress: { done, total in
                        checking.finish()
                        progress.update(done, of: total)
                    })
            } catch let stopped as UsersImport.Stopped {
                progress.finish()
                Self.listRefused(stopped.before)
                throw stopped
            }
            progress.finish()
            let out = Output.standardOutput
            out.line(
                "imported \(formatCount(UInt64(summary.imported))) of \(formatCount(UInt64(summary.users))) users into \(project.project) in \(summary.batches) batches"
            )
            out.line("seconds: \(format3(summary.seconds)) (\(formatCount(UInt64(summary.usersPerSecond))) users/s)")
            out.flush()
            if summary.secondFactorUsers > 0 {
                out.line("second factors: kept for \(formatCount(UInt64(summary.secondFactorUsers))) users")
                out.flush()
            }
            if summary.reenrolmentUsers > 0 {
                let errors = Output.standardError
                errors.line(
                    "note: \(summary.reenrolmentUsers) users have only SMS second factors (or TOTP ones without their secret), which Hearth can not check: their sign-ins answer MFA_REENROLLMENT_REQUIRED until an administrator resets their factors (accounts:update with mfa.enrollments) and they enrol a TOTP factor"
                )
                errors.flush()
            }
            Self.listRefused(summary)
            if !summary.refused.isEmpty { throw ExitCode(2) }
        }

        private static func listRefused(_ summary: UsersImport.Summary) {
            let errors = Output.standardError
            for refusal in summary.refused.prefix(100) { errors.line("refused \(refusal.localId): \(refusal.message)") }
            if summary.refused.count > 100 { errors.line("… and \(summary.refused.count - 100) more refused") }
            errors.flush()
        }

        /// The flags as a hash configuration; `nil` without --hash-algo (the file's is used).
        func hashConfig() throws -> HashConfig? {
            guard let hashAlgorithm else {
                let parameters: [Any?] = [
                    hashKey, saltSeparator, rounds, memoryCost, parallelization, blockSize, derivedKeyLength, hashInputOrder,
                ]
                if parameters.contains(where: { $0 != nil }) {
                    throw ValidationError("hash parameters were given without --hash-algo")
                }
                return nil
            }
            var config = HashConfig(algorithm: hashAlgorithm)
            func base64(_ value: String?, _ flag: String) throws -> [UInt8]? {
                try value.map {
                    guard let bytes = Base64URL.decode($0) else { throw ValidationError("\(flag) must be base64") }
                    return bytes
                }
            }
            config.key = try base64(hashKey, "--hash-key")
            config.saltSeparator = try base64(saltSeparator, "--salt-separator")
            config.rounds = rounds
            config.memoryCost = memoryCost
            config.parallelization = parallelization
            config.blockSize = blockSize
            config.derivedKeyLength = derivedKeyLength
            config.passwordFirst = try HashConfig.passwordFirst(order: hashInputOrder)
            try config.validate()
            return config
        }
    }
}
