import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthStore
import HearthTesting
import HearthWire
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

/// A Hearth API over a fresh data directory, assembled as `hearth serve` assembles it
/// (`HearthServer.assemble`: the directory's lock, the store service, the catch-up before
/// serving, the router) and driven through Hummingbird's router tester, with a manual clock
/// (revocation and expiry are tested by moving it, not by sleeping).
final class APIHarness: Sendable {
    static let project = ProjectID("demo-hearth")!
    let directory = TemporaryDirectory("api")
    let clock = ManualClock()
    let server: HearthServer.Assembly

    var context: AuthContext { server.context }
    /// The flow services over the server's context, for tests that call one directly.
    var services: AuthServices { AuthServices(context: server.context) }

    init(configure: (inout ServerSettings) -> Void = { _ in }, mailer: (any ActionLinkMailer)? = nil) throws {
        var configuration = ServerSettings()
        configuration.dataDirectory = directory.path
        configuration.passwords.scryptLogN = 10  // fast in debug builds; production uses 14
        configuration.passwords.hashThreads = 2
        configure(&configuration)
        server = try HearthServer.assemble(try configuration.validated(), clock: clock, mailer: mailer, logger: Self.quietLogger)
    }

    /// Warnings and errors only: a passing run prints a summary, not every request's line.
    static let quietLogger: Logger = {
        var logger = Logger(label: "hearth")
        logger.logLevel = .warning
        return logger
    }()

    /// The event types of one account's stream, in order.
    func eventTypes(of uid: String) throws -> [String] {
        try context.store.audit.events(of: .account(Self.project, UserID(uid)!)).map(\.type.name)
    }

    /// Runs `body` against the application, then dumps the events for schema validation. The
    /// store closes when the application's services stop, as at a daemon's shutdown.
    /// `live`: over a real TCP connection on loopback, so requests have a peer address (the
    /// abuse limits count by it); otherwise in process, without one.
    static func run(
        configure: (inout ServerSettings) -> Void = { _ in }, mailer: (any ActionLinkMailer)? = nil, live: Bool = false,
        _ body: @escaping @Sendable (APIHarness, APIClient) async throws -> Void
    ) async throws {
        let harness = try APIHarness(
            configure: { configuration in
                if live { configuration.listen.port = 0 }
                configure(&configuration)
            }, mailer: mailer)
        try await harness.server.application.test(live ? .ahc(.http) : .router) { client in
            try await body(harness, APIClient(client: client))
            try EventDump.write(harness.context.store)
        }
    }
}

/// An answer: the status and the decoded JSON body.
struct Reply: Sendable {
    var status: Int
    var json: JSONValue

    subscript(key: String) -> JSONValue? { json[key] }

    func string(_ key: String) -> String? { json[key]?.stringValue }

    /// `error.message`'s code, as the SDKs split it.
    var errorCode: String? {
        json["error"]?["message"]?.stringValue.map { String($0.split(separator: " : ", maxSplits: 1).first ?? "") }
    }
}

struct APIClient: Sendable {
    let client: any TestClientProtocol

    static let v3 = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"
    static let v1 = "/identitytoolkit.googleapis.com/v1/"
    static let admin: HTTPFields = [.authorization: "Bearer owner", .contentType: "application/json"]
    static let json: HTTPFields = [.contentType: "application/json"]

    func send(_ method: HTTPRequest.Method, _ uri: String, body: ByteBuffer?, headers: HTTPFields) async throws -> Reply {
        let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
        let json = JSONValue.parse(response.body.readableBytesView) ?? .null
        return Reply(status: Int(response.status.code), json: json)
    }

    func post(_ uri: String, _ body: JSONValue, headers: HTTPFields = APIClient.json) async throws -> Reply {
        try await send(.post, uri, body: ByteBuffer(bytes: body.encoded()), headers: headers)
    }

    /// iOS's legacy path, with an API key.
    func v3(_ name: String, _ body: JSONValue = [:]) async throws -> Reply {
        try await post(Self.v3 + name + "?key=test-key", body)
    }

    /// The web SDK's v1 path, with an API key.
    func v1(_ method: String, _ body: JSONValue = [:]) async throws -> Reply {
        try await post(Self.v1 + "accounts:" + method + "?key=test-key", body)
    }

    /// The Admin SDK's project-scoped path with `Bearer owner`.
    func admin(_ path: String, _ body: JSONValue = [:]) async throws -> Reply {
        try await post(Self.v1 + "projects/demo-hearth/" + path, body, headers: Self.admin)
    }

    func refresh(_ token: String) async throws -> Reply {
        try await post("/securetoken.googleapis.com/v1/token?key=test-key", ["grantType": "refresh_token", "refreshToken": .string(token)])
    }

    func signUp(email: String, password: String = "correct-horse-42") async throws -> Reply {
        try await v1("signUp", ["email": .string(email), "password": .string(password), "returnSecureToken": true])
    }

    func lookup(_ idToken: String) async throws -> Reply {
        try await v3("getAccountInfo", ["idToken": .string(idToken)])
    }
}

/// The payload of a JWT (no verification).
func claims(_ token: String?) -> [String: JSONValue] {
    token.flatMap { JWT.decode($0)?.payload } ?? [:]
}
