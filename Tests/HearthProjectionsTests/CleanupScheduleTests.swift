import HearthDomain
import HearthLedger
import HearthProjections
import HearthStore
import HearthTesting
import Testing

@Suite("projections: the anonymous-cleanup schedule")
struct CleanupScheduleTests {
    let day: Int64 = 86_400_000
    let project = TestStore.project

    func anonymous(_ test: TestStore, _ uid: String) throws {
        try test.run(.createAccount(project, UserID(uid)!, AccountCreated(method: .anonymous, createdAt: test.clock.now())))
    }

    func due(_ test: TestStore, _ uid: String) throws -> Int64? {
        try test.store.read { try $0.cleanupSchedule(UserID(uid)!, in: project)?.dueAt }
    }

    func cleanup(_ test: TestStore, _ enabled: Bool) throws {
        try test.run(.changeProjectConfig(project, ProjectConfigChange(anonymousCleanup: enabled)), as: TestStore.admin)
    }

    @Test func scheduleFollowsTheSeedRules() throws {
        let test = try TestStore(label: "cleanup")
        defer { try? test.close() }
        let start = test.clock.now()
        try anonymous(test, "before")
        #expect(try due(test, "before") == nil)
        // The operator can see, before enabling, how many accounts would be affected.
        #expect(try test.store.read { try $0.unscheduledAnonymousAccounts(in: project) } == 1)

        test.clock.advance(days: 2)
        try cleanup(test, true)
        // Created before cleanup was enabled: about 30 days after enabling.
        #expect(try due(test, "before") == start + 32 * day)
        test.clock.advance(days: 1)
        try anonymous(test, "after")
        // Created after: 30 days after creation.
        #expect(try due(test, "after") == start + 33 * day)

        test.clock.advance(days: 1)
        try cleanup(test, false)
        try anonymous(test, "while-off")
        // Turning cleanup off cancels nothing already scheduled, and schedules nothing new.
        #expect(try due(test, "before") == start + 32 * day)
        #expect(try due(test, "while-off") == nil)

        test.clock.advance(days: 1)
        try cleanup(test, true)
        #expect(try due(test, "while-off") == start + 35 * day)
        #expect(try due(test, "after") == start + 33 * day)

        // Upgrading by linking any method takes the account off the schedule for good.
        try test.run(.linkProvider(project, UserID("after")!, ProviderLink(providerId: "facebook.com", federatedId: "fb")))
        #expect(try due(test, "after") == nil)
        #expect(try test.account("after")?.isAnonymous == false)

        let due = try test.store.read { try $0.accountsDueForCleanup(in: project, now: start + 40 * day, limit: 10) }
        #expect(due.map(\.rawValue) == ["before", "while-off"])
        #expect(try test.store.read { try $0.accountsDueForCleanup(in: project, now: start + 32 * day - 1, limit: 10) }.isEmpty)

        test.clock.advance(days: 40)
        try test.run(.purgeAnonymous(project, UserID("before")!), as: Metadata(actor: .scheduler))
        #expect(try test.account("before") == nil)
        #expect(
            try test.store.read { try $0.accountsDueForCleanup(in: project, now: test.clock.now(), limit: 10) }.map(\.rawValue) == [
                "while-off"
            ])
    }
}
