import AsyncHTTPClient
import HTTPTypes
import HearthApp
import HearthAuth
import HearthDomain
import HearthHTTP
import HearthTesting
import HearthWire
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// The abuse limits over real TCP connections (the limits count by client address), with
/// clients told apart by X-Forwarded-For from a trusted proxy on loopback.
@Suite("abuse limits over HTTP")
struct AbuseLimitHTTPTests {
    static func production(limits: JSONValue? = nil) -> (inout ServerSettings) -> Void {
        { configuration in
            RecentSignInTests.production(&configuration)
            configuration.listen.trustedProxies = ["127.0.0.1", "::1"]
            configuration.limits.abuse = limits
        }
    }

    static func from(_ address: String) -> HTTPFields {
        [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: address]
    }

    static func signUp(_ api: APIClient, from address: String) async throws -> Reply {
        try await api.post(APIClient.v1 + "accounts:signUp?key=test-key", ["returnSecureToken": true], headers: Self.from(address))
    }

    static func signIn(_ api: APIClient, _ email: String, _ password: String, from address: String) async throws -> Reply {
        try await api.post(
            APIClient.v1 + "accounts:signInWithPassword?key=test-key",
            ["email": .string(email), "password": .string(password), "returnSecureToken": true], headers: Self.from(address))
    }

    /// A connection closed under a request, by either side: on a loaded host, 200 at once.
    static func isClosedUnder(_ error: any Error) -> Bool {
        if let error = error as? ChannelError { return error == .ioOnClosedChannel }
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        return false
    }

    /// 200 concurrent wrong-password loops from one address, each on a connection of its own,
    /// while `owner` (on the harness's client) signs in.
    static func flood(port: Int, attacker: String, whileOwner owner: @escaping @Sendable () async throws -> [Int]) async throws
        -> (owner: [Int], attacker: [String: Int])
    {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 200)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        do {
            let result = try await withThrowingTaskGroup(of: [String: Int].self) { group in
                let done = DoneFlag()
                for index in 0..<200 {
                    group.addTask {
                        var answers: [String: Int] = [:]
                        while !done.isSet {
                            var request = HTTPClientRequest(
                                url: "http://127.0.0.1:\(port)" + APIClient.v1 + "accounts:signInWithPassword?key=test-key")
                            request.method = .POST
                            request.headers.add(name: "Content-Type", value: "application/json")
                            request.headers.add(name: "X-Forwarded-For", value: attacker)
                            let body: JSONValue = [
                                "email": .string("target\(index % 5)@example.com"), "password": .string("wrong-\(index)"),
                            ]
                            request.body = .bytes(ByteBuffer(bytes: body.encoded()))
                            let bytes: ByteBuffer
                            do {
                                let response = try await client.execute(request, timeout: .seconds(30))
                                bytes = try await response.body.collect(upTo: 1 << 16)
                            } catch let error where Self.isClosedUnder(error) {
                                // A flooding client's connection may be closed under it (a loaded
                                // host); that is no answer the test judges: it tries again.
                                answers["closed", default: 0] += 1
                                continue
                            }
                            let json = JSONValue.parse(bytes.readableBytesView)
                            let code = json?["error"]?["message"]?.stringValue.map { String($0.split(separator: " ").first ?? "") }
                            answers[code ?? "OK", default: 0] += 1
                        }
                        return answers
                    }
                }
                let ownerStatuses = try await owner()
                done.set()
                var attackerAnswers: [String: Int] = [:]
                for try await answers in group { attackerAnswers.merge(answers, uniquingKeysWith: +) }
                return (ownerStatuses, attackerAnswers)
            }
            try await client.shutdown()
            return result
        } catch {
            try await client.shutdown()
            throw error
        }
    }

    @Test(
        "one address guessing at 200 connections does not keep another user out: its own queue, then its backoff",
        arguments: [
            // Only the per-client queue (no backoff within the run), then the defaults.
            JSONValue.object(["passwordFailuresPerAddress": 100_000, "passwordFailuresPerAccount": 1000, "hashQueuePerAddress": 4]), nil,
        ])
    func guessingDoesNotLockOthersOut(limits: JSONValue?) async throws {
        try await APIHarness.run(configure: Self.production(limits: limits), live: true) { harness, api in
            for index in 0..<5 { _ = try await api.signUp(email: "target\(index)@example.com") }
            #expect(try await api.signUp(email: "owner@example.com").status == 200)
            let port = try #require(api.client.port)
            let (owner, attacker) = try await Self.flood(port: port, attacker: "203.0.113.66") {
                var statuses: [Int] = []
                for _ in 0..<25 {
                    statuses.append(try await Self.signIn(api, "owner@example.com", "correct-horse-42", from: "198.51.100.7").status)
                }
                return statuses
            }
            #expect(owner == Array(repeating: 200, count: 25), "\(owner); attacker got \(attacker)")
            #expect(attacker["TOO_MANY_ATTEMPTS_TRY_LATER", default: 0] > 0, "\(attacker)")
            #expect(attacker["OK"] == nil)
            let refusals = try #require(harness.context.limits).refusals
            #expect(refusals[.hashQueuePerAddress, default: 0] + refusals[.passwordFailuresPerAddress, default: 0] > 0)
        }
    }

    @Test("40 wrong passwords at once from 40 addresses check 5 passwords, the limit; sequential ones check 5 too, not 6")
    func concurrentGuessesAreHeldToTheLimit() async throws {
        try await APIHarness.run(configure: Self.production(), live: true) { harness, api in
            #expect(try await api.signUp(email: "target@example.com").status == 200)
            let before = harness.context.passwords.started
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await Self.signIn(api, "target@example.com", "wrong-\(index)", from: "203.0.113.\(index + 1)").errorCode ?? "OK"
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(harness.context.passwords.started - before == 5, "\(answers)")
            #expect(answers["INVALID_LOGIN_CREDENTIALS"] == 5 && answers["TOO_MANY_ATTEMPTS_TRY_LATER"] == 35, "\(answers)")

            #expect(try await api.signUp(email: "second@example.com").status == 200)
            let sequentialStart = harness.context.passwords.started
            var codes: [String] = []
            for index in 0..<7 {
                codes.append(
                    try await Self.signIn(api, "second@example.com", "wrong-\(index)", from: "198.51.100.\(index + 1)").errorCode ?? "OK")
            }
            #expect(harness.context.passwords.started - sequentialStart == 5)
            #expect(
                codes == Array(repeating: "INVALID_LOGIN_CREDENTIALS", count: 5) + Array(repeating: "TOO_MANY_ATTEMPTS_TRY_LATER", count: 2)
            )
        }
    }

    @Test("an account locked by a guesser: its owner still resets the password or signs in by email link, and the reset lifts the lock")
    func lockoutLeavesRecoveryOpen() async throws {
        let configure: (inout ServerSettings) -> Void = { configuration in
            configuration.listen.trustedProxies = ["127.0.0.1", "::1"]
            configuration.limits.abuse = .object([:])  // development, with the default limits
        }
        try await APIHarness.run(configure: configure, live: true) { harness, api in
            _ = try await api.signUp(email: "locked@example.com")
            var last: Reply?
            for attempt in 0..<7 {
                last = try await Self.signIn(api, "locked@example.com", "guess-\(attempt)", from: "203.0.113.9")
            }
            #expect(last?.errorCode == "TOO_MANY_ATTEMPTS_TRY_LATER")
            // The owner, from elsewhere, waits out the account's backoff for a password sign-in…
            #expect(
                try await Self.signIn(api, "locked@example.com", "correct-horse-42", from: "198.51.100.2").errorCode
                    == "TOO_MANY_ATTEMPTS_TRY_LATER")
            // …but a reset and an email link still work.
            let reset = try await api.post(
                APIClient.v1 + "accounts:sendOobCode?key=test-key", ["requestType": "PASSWORD_RESET", "email": "locked@example.com"],
                headers: Self.from("198.51.100.2"))
            #expect(reset.status == 200)
            let (code, _) = try await ActionCodeTests.delivered(api, to: "locked@example.com", "PASSWORD_RESET")
            #expect(try await api.v1("resetPassword", ["oobCode": .string(code), "newPassword": "brand-new-pass-9"]).status == 200)
            #expect(try await Self.signIn(api, "locked@example.com", "brand-new-pass-9", from: "198.51.100.2").status == 200)
            _ = harness
        }
    }

    @Test("sign-ups: 100 an hour per client address; X-Forwarded-For counts only from a trusted proxy")
    func signUpsPerAddress() async throws {
        try await APIHarness.run(configure: Self.production(limits: .object(["signUpsPerAddressPerHour": 3])), live: true) { harness, api in
            var answers: [String] = []
            for address in ["203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.2"] {
                answers.append(try await Self.signUp(api, from: address).errorCode ?? "OK")
            }
            #expect(answers == ["OK", "OK", "OK", "TOO_MANY_ATTEMPTS_TRY_LATER", "OK"])
            harness.clock.advance(milliseconds: 3_600_000 / 3)
            let later = try await Self.signUp(api, from: "203.0.113.1")
            #expect(later.status == 200)
            #expect(harness.context.limits?.refusals[.signUpsPerAddress] == 1)
        }
        // Without trusted proxies, the header is the client's word: the peer is counted.
        try await APIHarness.run(
            configure: { configuration in
                RecentSignInTests.production(&configuration)
                configuration.limits.abuse = .object(["signUpsPerAddressPerHour": 2])
            }, live: true
        ) { _, api in
            var statuses: [Int] = []
            for index in 0..<3 { statuses.append(try await Self.signUp(api, from: "203.0.113.\(index)").status) }
            #expect(statuses == [200, 200, 400])
        }
    }

    @Test("action-code emails: five an hour to one recipient (QUOTA_EXCEEDED), the same answer for unknown addresses")
    func emailsPerRecipient() async throws {
        try await APIHarness.run(
            configure: { configuration in
                configuration.listen.trustedProxies = ["127.0.0.1", "::1"]
                configuration.limits.abuse = .object([:])
            }, live: true
        ) { _, api in
            _ = try await api.signUp(email: "inbox@example.com")
            for address in ["inbox@example.com", "nobody@example.com"] {
                var codes: [String] = []
                for index in 0..<6 {
                    let sent = try await api.post(
                        APIClient.v1 + "accounts:sendOobCode?key=test-key",
                        [
                            "requestType": "EMAIL_SIGNIN", "email": .string(address),
                            "continueUrl": "http://localhost/done", "canHandleCodeInApp": true,
                        ], headers: Self.from("192.0.2.\(index)"))
                    codes.append(sent.errorCode ?? "OK")
                }
                #expect(codes == ["OK", "OK", "OK", "OK", "OK", "QUOTA_EXCEEDED"], "\(address)")
            }
        }
    }
}

/// Set once, read by many tasks.
final class DoneFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}
