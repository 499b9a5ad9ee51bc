import HearthAuth
import HearthDomain
import HearthStore
import HearthTesting

/// The flow services over a real store in a temporary data directory, with a manual clock, an
/// ES256 key, cheap scrypt and the development outbox: the services as the daemon wires them,
/// without HTTP.
final class FlowFixture: Sendable {
    let test: TestStore
    let services: AuthServices
    let user: Caller
    let admin: Caller

    init(_ label: String, configure: (inout AuthSettings) -> Void = { _ in }) throws {
        test = try TestStore(label: label)
        var settings = AuthSettings()
        settings.recentSignIn = nil
        configure(&settings)
        let context = AuthContext(
            store: test.store, tokens: TokenIssuer(key: try SigningKey.generate(.es256)),
            passwords: PasswordHasher(
                parameters: PasswordHasher.Parameters(logN: 10), pool: WorkPool(threads: 1, name: "flow-test-scrypt")),
            outbox: Outbox(), settings: settings)
        services = AuthServices(context: context)
        user = Caller(project: TestStore.project, isAdmin: false, clientIp: "192.0.2.1")
        admin = Caller(project: TestStore.project, isAdmin: true)
    }

    var clock: ManualClock { test.clock }
    var origin: LinkOrigin { LinkOrigin(baseURL: "http://127.0.0.1:9099", apiKey: "test-key") }

    /// The last link the outbox holds for `email`, of `type`.
    func lastLink(to email: String, _ type: OOBCodeIssued.RequestType) throws -> ActionLink? {
        try services.actionCodes.pendingActionLinks(admin).last { $0.email == email && $0.requestType == type }
    }

    func close() throws {
        services.context.stopWorkers()
        try test.close()
    }
}

/// The Firebase error code a flow refused with (the message before " : ").
func refusal(_ body: () async throws -> some Any) async -> String? {
    do {
        _ = try await body()
        return nil
    } catch let error as FirebaseError {
        return String(error.message.split(separator: " ", maxSplits: 1).first ?? "")
    } catch {
        return "\(error)"
    }
}
