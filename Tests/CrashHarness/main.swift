// A child process for the crash-safety test: appends under load, printing every append the
// store acknowledged ("<sequence> <hash>"), until the test SIGKILLs it.
#if canImport(Glibc)
import Glibc
#endif
import HearthDomain
import HearthStore

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: hearth-crash-harness <data-dir> <run-id>")
    exit(2)
}
let store = try DataDirectory(arguments[1]).open(as: "crash harness")
let run = arguments[2]
let project = ProjectID("crash")!
let metadata = Metadata(actor: .system, actorId: "crash-harness")

/// One `write(2)` per line: lines under PIPE_BUF never interleave, and nothing sits in a
/// user-space buffer when the process dies.
func acknowledge(_ events: [StoredEvent]) {
    let text = events.map { "\($0.sequence) \($0.hash)\n" }.joined()
    _ = text.withCString { write(1, $0, strlen($0)) }
}

_ = "ready\n".withCString { write(1, $0, strlen($0)) }
await withTaskGroup(of: Void.self) { group in
    for worker in 0..<16 {
        group.addTask {
            var index = 0
            while true {
                index += 1
                let uid = UserID("\(run)-\(worker)-\(index)")!
                let commands: [Command] = [
                    .createAccount(project, uid, AccountCreated(method: .password, createdAt: 0, email: "\(uid)@crash.test", password: PasswordHash(algorithm: "SCRYPT", hash: [1], salt: [2]))),
                    .signIn(project, uid, method: "password", refreshTokenHash: "\(uid)"),
                    .update(project, uid, AccountUpdate(profile: ProfileUpdated(displayName: "Worker \(worker)"))),
                ]
                for command in commands {
                    guard let envelopes = try? await store.execute(command, metadata: metadata) else { continue }
                    acknowledge(envelopes)
                }
            }
        }
    }
}
withExtendedLifetime(store) {}
