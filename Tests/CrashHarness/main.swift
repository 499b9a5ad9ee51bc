import HearthDomain
import HearthScheduler
import HearthStore
import Logging
import Synchronization

// A child process for the crash-safety test: appends under load, printing every append the
// store acknowledged ("<sequence> <hash>"), until the test SIGKILLs it.
#if canImport(Glibc)
import Glibc
#endif

/// Anonymous accounts of the purge run.
let purgeAccounts = 20_000

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: hearth-crash-harness <data-dir> <run-id | purge>")
    exit(2)
}
let store = try DataDirectory(arguments[1]).open(as: "crash harness")
let run = arguments[2]
let project = ProjectID("crash")!
let metadata = Metadata(actor: .system, actorId: "crash-harness")

/// One `write(2)` per line: lines under PIPE_BUF never interleave, and nothing sits in a
/// user-space buffer when the process dies.
func say(_ text: String) {
    _ = text.withCString { write(1, $0, strlen($0)) }
}

/// Whether "ready" was said: after the first acknowledgement, so the test's kill lands while
/// writes are being acknowledged however slow the host is to start.
let appending = Atomic(false)

func acknowledge(_ events: [StoredEvent]) {
    say(events.map { "\($0.sequence) \($0.hash)\n" }.joined())
    if !appending.exchange(true, ordering: .relaxed) { say("ready\n") }
}

if run == "purge" {
    // The scheduler's crash test: the first run makes `purgeAccounts` anonymous accounts due
    // at once; every run purges what is due, in small batches, until killed or done.
    if try store.read({ try $0.recordedConfig(of: project) }) == nil {
        _ = try await store.execute(
            .changeProjectConfig(project, ProjectConfigChange(anonymousCleanup: true, anonymousCleanupPeriodSeconds: 1)),
            metadata: metadata)
        for chunk in stride(from: 0, to: purgeAccounts, by: 2_000) {
            let commands = (chunk..<min(chunk + 2_000, purgeAccounts)).map { index in
                Command.createAccount(project, UserID("p\(index)")!, AccountCreated(method: .anonymous, createdAt: 0))
            }
            for result in try await store.executeAll(commands, metadata: metadata) { _ = try result.get() }
        }
        try await Task.sleep(for: .milliseconds(1_100))
    }
    let scheduler = CleanupScheduler(
        store: store, clock: SystemClock(), startsAfter: StartSignal(), batchSize: 32, logger: Logger(label: "crash"))
    // "ready" once the first batch is committed, so the test's kill lands mid-purge however
    // slow the machine is to start purging (on a slow CI host 100 ms was not enough).
    let seeded = try store.ledgerHead().sequence
    let purge = Task { try await scheduler.purgeDue() }
    let deadline = ContinuousClock.now + .seconds(60)
    while try store.ledgerHead().sequence == seeded, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(1))
    }
    say("ready\n")
    say("done \(try await purge.value)\n")
    store.close()
    exit(0)
}

await withTaskGroup(of: Void.self) { group in
    for worker in 0..<16 {
        group.addTask {
            var index = 0
            while true {
                index += 1
                let uid = UserID("\(run)-\(worker)-\(index)")!
                var commands: [Command] = [
                    .createAccount(
                        project, uid,
                        AccountCreated(
                            method: .password, createdAt: 0, email: "\(uid)@crash.test",
                            password: PasswordHash(algorithm: "SCRYPT", hash: [1], salt: [2]))),
                    .signIn(project, uid, method: "password", refreshTokenHash: "\(uid)"),
                    .update(project, uid, AccountUpdate(profile: ProfileUpdated(displayName: "Worker \(worker)"))),
                ]
                // Every other account is then forgotten, by its user or by an admin: the event
                // and its key's destruction are one write, which a kill cannot split.
                switch index % 4 {
                case 1: commands.append(.deleteAccount(project, uid, by: .user))
                case 3: commands.append(.eraseAccount(project, uid, reason: "crash test"))
                default: break
                }
                for command in commands {
                    guard let envelopes = try? await store.execute(command, metadata: metadata) else { continue }
                    acknowledge(envelopes)
                }
            }
        }
    }
}
withExtendedLifetime(store) {}
