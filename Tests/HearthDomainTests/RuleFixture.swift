import HearthDomain
import HearthTesting

/// What the `decide` suites share: one project, one instant, the in-memory state, and a way to
/// record what happened before ("given").
protocol RuleFixture {
    var state: InMemoryState { get set }
}

extension RuleFixture {
    var project: ProjectID { ProjectID("rules")! }
    var now: Int64 { 1_800_000_000_000 }

    func uid(_ raw: String) -> UserID { UserID(raw)! }

    func hash(_ seed: UInt8) -> PasswordHash {
        PasswordHash(algorithm: .hearthScrypt, hash: [seed], salt: [seed], memoryCost: 14, blockSize: 8, parallelization: 1)
    }

    mutating func given(_ commands: Command...) throws {
        for command in commands { try state.execute(command, now: now) }
    }
}
