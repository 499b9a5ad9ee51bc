import HearthDomain
import HearthStore
import HearthTesting
import Logging
import ServiceLifecycle
import Testing

@testable import HearthScheduler

/// Anonymous auto-cleanup (a period after creation, or after cleanup was turned on), run by the
/// scheduler against a real store, with a test clock.
@Suite("scheduler: anonymous auto-cleanup")
struct CleanupSchedulerTests {
    static let project = TestStore.project
    static let day: Int64 = 86_400_000

    /// A store, the scheduler over it, and the scheduler running in a ServiceGroup.
    final class Running: Sendable {
        let test: TestStore
        let scheduler: CleanupScheduler
        let group: ServiceGroup

        init(label: String, batchSize: Int = 256) throws {
            test = try TestStore(label: label)
            let started = StartSignal()
            started.open()
            scheduler = CleanupScheduler(
                store: test.store, clock: test.clock, startsAfter: started, batchSize: batchSize, logger: Logger(label: "test"))
            group = ServiceGroup(services: [scheduler], logger: Logger(label: "test"))
        }

        var store: AccountStore { test.store }
        var clock: ManualClock { test.clock }

        /// A second scheduler over the same store: the daemon restarted.
        func restarted() -> (CleanupScheduler, ServiceGroup) {
            let started = StartSignal()
            started.open()
            let scheduler = CleanupScheduler(store: store, clock: clock, startsAfter: started, logger: Logger(label: "test"))
            return (scheduler, ServiceGroup(services: [scheduler], logger: Logger(label: "test")))
        }

        func anonymous(_ uid: String) throws {
            try test.run(.createAccount(project, UserID(uid)!, AccountCreated(method: .anonymous, createdAt: clock.now())))
        }

        func cleanup(_ enabled: Bool, periodSeconds: Int64? = nil) throws {
            let change = ProjectConfigChange(anonymousCleanup: enabled, anonymousCleanupPeriodSeconds: periodSeconds)
            try test.run(.changeProjectConfig(project, change), as: TestStore.admin)
        }

        func exists(_ uid: String) throws -> Bool { try test.account(uid) != nil }

        func purges(of uid: String) throws -> [AnonymousPurged] {
            try store.audit.events(of: .account(project, UserID(uid)!)).compactMap { event in
                if case .anonymousPurged(let purged) = event.payload { purged } else { nil }
            }
        }
    }

    /// Waits (on real time, briefly) for the scheduler to reach a state.
    static func eventually(_ condition: () throws -> Bool, _ comment: Comment) async throws {
        for _ in 0..<2000 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record(comment)
    }

    /// Waits until `scheduler` is asleep with nothing to wake it (`CleanupScheduler.idle`), and
    /// says what it sleeps until; one that never gets there fails the test within 10 s.
    static func idle(_ scheduler: CleanupScheduler) async throws -> Int64? {
        enum Outcome: Sendable {
            case idle(Int64?)
            case timedOut
        }
        let outcome = try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask { .idle(await scheduler.idle()) }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return .timedOut
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
        guard case .idle(let until) = outcome else {
            Issue.record("the scheduler did not settle")
            return nil
        }
        return until
    }

    @Test(
        "created while on: a period after creation; existed when turned on: a period after that; off keeps the schedule; linked (even if unlinked again): never; across a restart"
    )
    func theSeedRulesEndToEnd() async throws {
        let running = try Running(label: "sched-rules")
        defer { try? running.test.close() }
        let clock = running.clock
        let start = clock.now()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await running.group.run() }
            try running.anonymous("before")
            clock.advance(days: 2)
            try running.cleanup(true)
            clock.advance(days: 1)
            try running.anonymous("after")
            try running.anonymous("linked")
            try running.anonymous("unlinked")
            clock.advance(days: 1)
            try running.test.run(.linkProvider(Self.project, UserID("linked")!, ProviderLink(providerId: .github, federatedId: "7")))
            try running.test.run(.linkProvider(Self.project, UserID("unlinked")!, ProviderLink(providerId: .github, federatedId: "8")))
            try running.test.run(.unlinkProviders(Self.project, UserID("unlinked")!, [.github]))
            clock.advance(days: 1)
            try running.cleanup(false)
            try running.anonymous("whileOff")
            // The scheduler sleeps until the earliest due time: 30 days after cleanup was on.
            #expect(try await Self.idle(running.scheduler) == start + 32 * Self.day)
            clock.advance(milliseconds: start + 32 * Self.day - 1 - clock.now())
            // Still asleep until the due time, a millisecond away: nothing ran, nothing went.
            #expect(clock.sleeperCount == 1)
            #expect(try running.exists("before"), "not due for another millisecond")
            clock.advance(milliseconds: 1)
            try await Self.eventually({ try !running.exists("before") }, "'before' was not purged when due")
            #expect(try running.exists("after"))
            // The daemon stops; 'after' falls due while it is down; the next start purges it.
            await running.group.triggerGracefulShutdown()
            try await tasks.next()
            clock.advance(days: 1)
            #expect(try running.exists("after"), "no scheduler runs")
            let (scheduler, restarted) = running.restarted()
            tasks.addTask { try await restarted.run() }
            // Its first pass purges what fell due while it was down; then nothing is scheduled.
            #expect(try await Self.idle(scheduler) == nil)
            #expect(try !running.exists("after"), "'after' was not purged after the restart")
            clock.advance(days: 400)
            #expect(try running.exists("linked") && running.exists("unlinked") && running.exists("whileOff"))
            #expect(
                try running.purges(of: "before")
                    == [AnonymousPurged(dueAt: start + 32 * Self.day, rule: .existedWhenCleanupTurnedOn, since: start + 2 * Self.day)])
            #expect(
                try running.purges(of: "after")
                    == [AnonymousPurged(dueAt: start + 33 * Self.day, rule: .createdWhileCleanupOn, since: start + 3 * Self.day)])
            await restarted.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test("a commit that schedules something sooner wakes the scheduler; after downtime, the first pass purges all overdue, each once")
    func wakesEarlyAndCatchesUp() async throws {
        let running = try Running(label: "sched-catchup", batchSize: 7)
        defer { try? running.test.close() }
        let clock = running.clock
        try running.cleanup(true)
        for index in 0..<40 { try running.anonymous("a\(index)") }
        // Downtime: the scheduler is not running while they become due.
        clock.advance(days: 31)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await running.group.run() }
            try await Self.eventually({ try running.store.read { try $0.accountCount() } == 0 }, "overdue accounts left")
            for index in 0..<40 { #expect(try running.purges(of: "a\(index)").count == 1) }
            // Nothing scheduled: it waits for a commit, not for the clock. A period of a
            // minute makes a new account due long before anything else.
            try running.cleanup(true, periodSeconds: 60)
            try running.anonymous("soon")
            let asleepUntil = try await Self.idle(running.scheduler)
            #expect(
                asleepUntil == clock.now() + 60_000,
                "asleep until the new due time, not \(String(describing: asleepUntil)) (now \(clock.now()))")
            clock.advance(milliseconds: 60_000)
            try await Self.eventually({ try !running.exists("soon") }, "'soon' was not purged a minute later")
            await running.group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test("a shutdown mid-purge stops between batches: every account is either purged once or still there")
    func shutdownMidPurgeLosesNothing() async throws {
        let running = try Running(label: "sched-stop", batchSize: 50)
        defer { try? running.test.close() }
        try running.cleanup(true)
        let uids = (0..<3000).map { UserID("s\($0)")! }
        let created = uids.map {
            Command.createAccount(Self.project, $0, AccountCreated(method: .anonymous, createdAt: running.clock.now()))
        }
        for chunk in stride(from: 0, to: created.count, by: 500) {
            _ = try await running.store.executeAll(Array(created[chunk..<min(chunk + 500, created.count)]), metadata: TestStore.user)
        }
        running.clock.advance(days: 30)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await running.group.run() }
            try await Self.eventually({ try running.store.read { try $0.accountCount() } < 3000 }, "nothing purged")
            await running.group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let left = try running.store.read { try $0.accountCount() }
        #expect(left > 0, "the shutdown came after the last batch; make the test's batches smaller")
        var purged = 0
        for uid in uids {
            let purges = try running.purges(of: uid.rawValue).count
            let exists = try running.test.account(uid.rawValue) != nil
            #expect(purges == (exists ? 0 : 1))
            purged += purges
        }
        #expect(purged + left == 3000)
        #expect(try running.store.audit.verify().isIntact)
    }

    @Test("on a cluster's follower the scheduler waits without failing, and purges once its node leads")
    func followerWaits() async throws {
        let running = try Running(label: "sched-follower")
        defer { try? running.test.close() }
        try running.cleanup(true)
        try running.anonymous("due")
        running.clock.advance(days: 31)
        running.store.writeAuthority.follow("n2")
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await running.group.run() }
            // Refused, it looks again in five seconds; it neither purged nor stopped.
            #expect(try await Self.idle(running.scheduler) == running.clock.now() + SchedulerTiming.followerRetry)
            #expect(try running.exists("due"))
            running.store.writeAuthority.lead(term: 1, until: .now + .seconds(600))
            running.clock.advance(milliseconds: SchedulerTiming.followerRetry)
            try await Self.eventually({ try !running.exists("due") }, "not purged once the node leads")
            await running.group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
