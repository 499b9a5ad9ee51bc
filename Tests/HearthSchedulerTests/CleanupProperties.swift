import HearthDomain
import HearthStore
import HearthTesting
import Logging
import PropertyBased
import Testing

@testable import HearthScheduler

/// Random histories of sign-ups, upgrades, cleanup switches, period changes and time, with a
/// scheduler pass now and then: what anonymous cleanup promises (every due account purged, none
/// that ever linked a sign-in method) holds after every pass.
@Suite("scheduler: cleanup invariants under random histories")
struct CleanupProperties {
    static let project = TestStore.project

    @Test func linkedAccountsSurviveAndDueAccountsGo() async throws {
        await propertyCheck(count: 40, input: Gen.int(in: 0...1_000_000).array(of: 1...60)) { numbers in
            do {
                try await Self.check(numbers)
            } catch {
                Issue.record("infrastructure error: \(error)")
            }
        }
    }

    static func check(_ numbers: [Int]) async throws {
        let test = try TestStore(label: "cleanup-prop")
        defer { try? test.close() }
        let started = StartSignal()
        started.open()
        let scheduler = CleanupScheduler(
            store: test.store, clock: test.clock, startsAfter: started, batchSize: 3, logger: Logger(label: "test"))
        var everLinked = Set<UserID>()
        for (step, n) in numbers.enumerated() {
            let uid = UserID("u\(n % 12)")!
            switch n % 7 {
            case 0, 1:
                _ = try? test.run(.createAccount(project, uid, AccountCreated(method: .anonymous, createdAt: test.clock.now())))
            case 2:
                let link = ProviderLink(providerId: .github, federatedId: "f\(step)")
                if (try? test.run(.linkProvider(project, uid, link))) != nil { everLinked.insert(uid) }
            case 3:
                let period: Int64 = [60, 86_400, 2_592_000][n % 3]
                try test.run(
                    .changeProjectConfig(
                        project, ProjectConfigChange(anonymousCleanup: n % 2 == 0, anonymousCleanupPeriodSeconds: period)),
                    as: TestStore.admin)
            case 4, 5:
                test.clock.advance(milliseconds: Int64(n % 41) * 86_400_000 + Int64(n % 1000) * 1000)
            default:
                _ = try await scheduler.purgeDue()
                let now = test.clock.now()
                try test.store.read { reader throws in
                    // Every account due by now is gone.
                    #expect(try reader.accountsDueForCleanup(now: now, limit: 1000).isEmpty)
                    for uid in everLinked {
                        // No account that ever linked a method is purged (nothing else deletes here).
                        #expect(try reader.account(uid, in: project) != nil, "\(uid) was linked, then purged")
                        #expect(try reader.cleanupSchedule(uid, in: project) == nil)
                    }
                }
            }
        }
        for uid in everLinked {
            // A uid may have been purged, then signed up again and linked: its last life counts.
            let events = try test.store.audit.events(of: .account(project, uid))
            let lastLife = events.lastIndex { if case .accountCreated = $0.payload { true } else { false } } ?? 0
            #expect(!events[lastLife...].contains { if case .anonymousPurged = $0.payload { true } else { false } })
        }
    }
}
