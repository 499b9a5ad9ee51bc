import Foundation
import HearthDomain
import Synchronization
import Testing

@testable import HearthAuth

@Suite("abuse limits")
struct AbuseLimitTests {
    static let project = ProjectID("demo-hearth")!
    static let hour: Int64 = 3_600_000

    /// Names appended from pool threads, in order.
    final class Recorder: Sendable {
        private let recorded = Mutex<[String]>([])
        func add(_ name: String) { recorded.withLock { $0.append(name) } }
        var names: [String] { recorded.withLock { $0 } }
    }

    static func caller(_ ip: String?, project: ProjectID = project, admin: Bool = false) -> Caller {
        Caller(project: project, isAdmin: admin, clientIp: ip)
    }

    @Test("sign-ups: 100 an hour per address, refilled over the hour; other addresses, projects and admins unaffected")
    func signUps() throws {
        let refused = Mutex<[AbuseGuard.Refusal]>([])
        let limits = AbuseGuard(policy: AbuseLimitPolicy()) { refusal in refused.withLock { $0.append(refusal) } }
        let now: Int64 = 1_000_000
        for _ in 0..<100 { try limits.admitSignUp(Self.caller("203.0.113.5"), now: now) }
        #expect(throws: FirebaseError.self) { try limits.admitSignUp(Self.caller("203.0.113.5"), now: now) }
        try limits.admitSignUp(Self.caller("203.0.113.6"), now: now)
        try limits.admitSignUp(Self.caller("203.0.113.5", project: ProjectID("other")!), now: now)
        try limits.admitSignUp(Self.caller("203.0.113.5", admin: true), now: now)
        // One more after a hundredth of the hour.
        try limits.admitSignUp(Self.caller("203.0.113.5"), now: now + Self.hour / 100)
        #expect(throws: FirebaseError.self) { try limits.admitSignUp(Self.caller("203.0.113.5"), now: now + Self.hour / 100) }
        #expect(limits.refusals[.signUpsPerAddress] == 2)
        let first = try #require(refused.withLock { $0.first })
        #expect(first.address == "203.0.113.5" && first.limit == .signUpsPerAddress && (first.retryAfter ?? 0) > 0)
        // Without an address (an in-process caller) there is nothing to count by.
        for _ in 0..<200 { try limits.admitSignUp(Self.caller(nil), now: now) }
    }

    @Test("wrong passwords: the limit's failures are free, then 1 s, 2 s, 4 s … of waiting; a correct password clears the account's count")
    func passwordBackoff() throws {
        var policy = AbuseLimitPolicy()
        policy.defaults.passwordFailuresPerAccount = 3
        policy.defaults.passwordBackoffMaxSeconds = 5
        let limits = AbuseGuard(policy: policy)
        let guesser = Self.caller("198.51.100.9")
        var now: Int64 = 5_000
        // Three free failures, and the third starts the wait: three checks, not four.
        for _ in 0..<3 {
            limits.passwordFailed(try limits.reservePasswordAttempt(email: "ann@example.com", guesser, now: now), now: now)
        }
        for delay in [1000, 2000, 4000, 5000, 5000] {
            #expect(throws: FirebaseError.self) {
                try limits.reservePasswordAttempt(email: "ann@example.com", guesser, now: now + Int64(delay) - 1)
            }
            now += Int64(delay)
            limits.passwordFailed(try limits.reservePasswordAttempt(email: "ann@example.com", guesser, now: now), now: now)
        }
        // The owner, from anywhere, is held to the account's wait too; a reset or a correct password clears it.
        #expect(throws: FirebaseError.self) {
            try limits.reservePasswordAttempt(email: "ann@example.com", Self.caller("192.0.2.1"), now: now)
        }
        limits.release(try limits.reservePasswordAttempt(email: "bob@example.com", Self.caller("192.0.2.1"), now: now), now: now)
        limits.passwordProven(email: "ann@example.com", project: Self.project)
        let owner = try limits.reservePasswordAttempt(email: "ann@example.com", Self.caller("192.0.2.1"), now: now)
        limits.passwordSucceeded(owner, now: now)
        #expect(limits.refusals[.passwordFailuresPerAccount] == 6)
    }

    @Test("wrong passwords from one address across many accounts: the address waits after its 25th")
    func addressBackoff() throws {
        let limits = AbuseGuard(policy: AbuseLimitPolicy())
        let sprayer = Self.caller("2001:db8:1:2:3:4:5:6")
        for index in 0..<25 {
            limits.passwordFailed(try limits.reservePasswordAttempt(email: "user\(index)@example.com", sprayer, now: 0), now: 0)
        }
        // The same /64 is the same client.
        #expect(throws: FirebaseError.self) {
            try limits.reservePasswordAttempt(email: "new@example.com", Self.caller("2001:db8:1:2::99"), now: 1)
        }
        _ = try limits.reservePasswordAttempt(email: "new@example.com", Self.caller("2001:db8:1:3::1"), now: 1)
        #expect(limits.refusals[.passwordFailuresPerAddress] == 1)
        #expect(AbuseGuard.addressKey(Self.caller("::1")) == "0:0:0:0::/64")
        #expect(AbuseGuard.addressKey(Self.caller("2001:db8::1")) == "2001:db8:0:0::/64")
        // IPv4 clients of a dual-stack listener count by their own address, not as one /64.
        #expect(AbuseGuard.addressKey(Self.caller("::ffff:203.0.113.5")) == "203.0.113.5")
        #expect(AbuseGuard.addressKey(Self.caller("203.0.113.5")) == "203.0.113.5")
    }

    @Test("concurrent guesses: checks under way count against the allowance, so N at once never check more than the limit")
    func concurrentGuesses() async throws {
        let limits = AbuseGuard(policy: AbuseLimitPolicy())
        // 40 addresses guess one account at once: 5 checks are admitted, 35 wait.
        let admitted = await withTaskGroup(of: AbuseGuard.PasswordAttempt?.self) { group in
            for index in 0..<40 {
                group.addTask { try? limits.reservePasswordAttempt(email: "ann@example.com", Self.caller("203.0.113.\(index)"), now: 0) }
            }
            return await group.reduce(into: [AbuseGuard.PasswordAttempt]()) { if let attempt = $1 { $0.append(attempt) } }
        }
        #expect(admitted.count == 5)
        for attempt in admitted { limits.passwordFailed(attempt, now: 0) }
        #expect(throws: FirebaseError.self) {
            try limits.reservePasswordAttempt(email: "ann@example.com", Self.caller("192.0.2.1"), now: 1)
        }
        // One address sprays 300 accounts at once: 25 checks.
        let sprayed = (0..<300).compactMap { index in
            try? limits.reservePasswordAttempt(email: "u\(index)@example.com", Self.caller("198.51.100.7"), now: 0)
        }
        #expect(sprayed.count == 25)
        // A check that never ran (a disabled account, a full queue) gives its place back.
        limits.release(sprayed[0], now: 0)
        #expect((try? limits.reservePasswordAttempt(email: "v@example.com", Self.caller("198.51.100.7"), now: 0)) != nil)
    }

    @Test("attempts that do not fail leave nothing behind: a flood of them can not evict a lock, nor keep an address's count alive")
    func backoffEntriesLastForFailuresOnly() {
        let table = LimitTable<Backoff>(capacity: 100)
        for _ in 0..<5 {
            _ = table.update("victim", now: 0) { $0.reserve(free: 5, now: 0) }
            table.update("victim", now: 0) { $0.settle(failed: true, free: 5, maxDelay: 900_000, now: 0) }
        }
        #expect(table.peek("victim")?.isHolding(now: 1) == true)
        // 10,000 guesses at other accounts, each reserved then given back (refused, or never checked).
        for index in 0..<10_000 {
            _ = table.update("other-\(index)", now: 1) { $0.reserve(free: 5, now: 1) }
            table.update("other-\(index)", now: 1) { $0.settle(failed: false, free: 5, maxDelay: 900_000, now: 1) }
        }
        #expect(table.count == 1 && table.peek("victim")?.isHolding(now: 1) == true)
        // A table full of remembered failures gives up those holding nobody back first, the
        // newest included, before the older lock.
        for index in 0..<200 {
            _ = table.update("failed-\(index)", now: 2) { $0.reserve(free: 5, now: 2) }
            table.update("failed-\(index)", now: 2) { $0.settle(failed: true, free: 5, maxDelay: 900_000, now: 2) }
        }
        #expect(table.count <= 100 && table.peek("victim")?.isHolding(now: 3) == true)

        // A shared address: a failure, then an hour of successful sign-ins through it: forgotten.
        var shared = Backoff(now: 0)
        _ = shared.reserve(free: 25, now: 0)
        shared.settle(failed: true, free: 25, maxDelay: 900_000, now: 0)
        for minute in 1...70 {
            let now = Int64(minute) * 60_000
            _ = shared.reserve(free: 25, now: now)
            shared.settle(failed: false, free: 25, maxDelay: 900_000, now: now)
        }
        #expect(shared.isSpent(now: 70 * 60_000))
    }

    @Test("emails: per recipient (QUOTA_EXCEEDED) and per address (TOO_MANY_ATTEMPTS_TRY_LATER)")
    func emails() throws {
        let limits = AbuseGuard(policy: AbuseLimitPolicy())
        for index in 0..<5 { try limits.admitEmail(to: "ann@example.com", Self.caller("192.0.2.\(index)"), now: 0) }
        let quota = #expect(throws: FirebaseError.self) { try limits.admitEmail(to: "ann@example.com", Self.caller("192.0.2.9"), now: 0) }
        #expect(quota?.message.hasPrefix("QUOTA_EXCEEDED") == true)
        for index in 0..<25 { try limits.admitEmail(to: "u\(index)@example.com", Self.caller("192.0.2.77"), now: 0) }
        let address = #expect(throws: FirebaseError.self) { try limits.admitEmail(to: "z@example.com", Self.caller("192.0.2.77"), now: 0) }
        #expect(address?.message.hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER") == true)
    }

    @Test("the tables hold a bounded number of clients, however many come")
    func boundedFootprint() {
        let table = LimitTable<TokenBucket>(capacity: 1000)
        for index in 0..<10_000 {
            _ = table.update("client-\(index)", now: Int64(index)) { $0.take(capacity: 100, period: Self.hour, now: Int64(index)) }
        }
        #expect(table.count <= 1000)
        // The most recent clients are the ones kept.
        #expect(table.peek("client-9999") != nil)
        #expect(table.peek("client-0") == nil)
    }

    @Test("the hashing pool serves clients in turn and refuses a client past its share, not everyone")
    func fairPool() async throws {
        let pool = WorkPool(threads: 1, name: "fair", maxQueued: 100, maxQueuedPerClient: 4)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let order = Recorder()
        let running = Recorder()
        let blocker = Task {
            try await pool.run(client: "flood") {
                running.add("blocker")
                gate.wait()
            }
        }
        while running.names.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
        // The flooding client queues its share; past it, it is refused at once.
        var flood: [Task<Void, any Error>] = []
        for _ in 0..<4 {
            let queued = Task { try await pool.run(client: "flood") { order.add("flood") } }
            flood.append(queued)
        }
        while pool.waitingJobs < 4 { try await Task.sleep(for: .milliseconds(2)) }
        await #expect(throws: WorkPool.Busy(clientShareFull: true)) { try await pool.run(client: "flood") {} }
        // Another client is not refused, and is served next, ahead of the flood's queue.
        let owner = Task { try await pool.run(client: "owner") { order.add("owner") } }
        while pool.waitingJobs < 5 { try await Task.sleep(for: .milliseconds(2)) }
        gate.signal()
        try await blocker.value
        try await owner.value
        for task in flood { try await task.value }
        #expect(order.names.prefix(2) == ["flood", "owner"])
    }
}
