import HearthDomain
import HearthStore
import HearthTesting
import Logging
import ServiceLifecycle
import Testing

@testable import HearthScheduler

/// Codes that expire unused forget their addresses: the sweep records `oob_code.expired`,
/// which destroys a code's own key in the same write.
@Suite("scheduler: expired action codes are forgotten")
struct ActionCodeSweeperTests {
    static let project = TestStore.project
    static let hour: Int64 = 3_600_000

    @Test func expiredCodesForgetTheirAddressesAndStillAnswerExpired() async throws {
        let test = try TestStore(label: "sweep")
        defer { try? test.close() }
        let started = StartSignal()
        started.open()
        let sweeper = ActionCodeSweeper(
            store: test.store, clock: test.clock, startsAfter: started, batchSize: 2, logger: Logger(label: "test"))
        let visitor = Metadata(actor: .endUser, requestId: "r", clientIp: "192.0.2.44")
        let uid = UserID("owner")!
        try test.run(.createAccount(Self.project, uid, AccountCreated(method: .password, createdAt: 0, email: "owner@sweep.example")))
        let now = test.clock.now()
        let codes: [(String, OOBCodeIssued)] = [
            ("new-address", OOBCodeIssued(requestType: .emailSignIn, email: "stranger@sweep.example", expiresAt: now + Self.hour)),
            (
                "change",
                OOBCodeIssued(
                    requestType: .verifyAndChangeEmail, email: "owner@sweep.example", uid: uid, newEmail: "moved@sweep.example",
                    expiresAt: now + Self.hour)
            ),
            ("late", OOBCodeIssued(requestType: .emailSignIn, email: "later@sweep.example", expiresAt: now + 3 * Self.hour)),
            ("used", OOBCodeIssued(requestType: .emailSignIn, email: "used@sweep.example", expiresAt: now + Self.hour)),
        ]
        for (hash, issued) in codes { try test.run(.issueOOBCode(Self.project, codeHash: hash, issued), as: visitor) }
        try test.run(.consumeOOBCode(Self.project, codeHash: "used"), as: visitor)
        #expect(try await sweeper.sweepDue() == 0)
        #expect(try test.store.read { try $0.nextCodeExpiry() } == now + Self.hour)

        test.clock.advance(milliseconds: 2 * Self.hour)
        #expect(try await sweeper.sweepDue() == 2)
        for hash in ["new-address", "change"] {
            let code = try #require(try test.store.read { try $0.oobCode(hash, in: Self.project) })
            #expect(code.isForgotten && code.newEmail == nil && !code.consumed)
            let events = try test.store.audit.events(of: .oobCode(Self.project, hash))
            #expect(events.map(\.type) == [.oobCodeIssued, .oobCodeExpired])
            #expect(events.last?.metadata.actorId == "action-code-sweep")
            // Using it answers as an expired code does.
            #expect(throws: AuthError.expiredOobCode) { try test.run(.consumeOOBCode(Self.project, codeHash: hash)) }
        }
        // The code that named no account had a key of its own: gone, and its address with it.
        #expect(try test.store.audit.events(of: .oobCode(Self.project, "new-address")).first?.isErased == true)
        // The one under its account's key reads until the account ends.
        #expect(try test.store.audit.events(of: .oobCode(Self.project, "change")).first?.isErased == false)
        #expect(try test.store.read { try $0.oobCode("late", in: Self.project) }?.email == "later@sweep.example")
        #expect(try test.store.read { try $0.nextCodeExpiry() } == now + 3 * Self.hour)
        #expect(throws: AuthError.invalidOobCode) { try test.run(.expireOOBCode(Self.project, codeHash: "used")) }
        #expect(throws: AuthError.notDue) { try test.run(.expireOOBCode(Self.project, codeHash: "late")) }

        test.clock.advance(milliseconds: 2 * Self.hour)
        #expect(try await sweeper.sweepDue() == 1)
        #expect(try test.store.read { try $0.nextCodeExpiry() } == nil)
        let live = try test.store.maintenance.digest()
        try test.store.maintenance.rebuild()
        #expect(try test.store.maintenance.digest() == live)
    }

    @Test func theServiceSleepsUntilTheNextExpiryAndSweepsIt() async throws {
        let test = try TestStore(label: "sweep-run")
        defer { try? test.close() }
        let started = StartSignal()
        started.open()
        let sweeper = ActionCodeSweeper(store: test.store, clock: test.clock, startsAfter: started, logger: Logger(label: "test"))
        let group = ServiceGroup(services: [sweeper], logger: Logger(label: "test"))
        let issued = OOBCodeIssued(requestType: .emailSignIn, email: "soon@sweep.example", expiresAt: test.clock.now() + 60_000)
        try test.run(.issueOOBCode(Self.project, codeHash: "soon", issued))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            test.clock.advance(milliseconds: 61_000)
            for _ in 0..<2000 {
                if try test.store.read({ try $0.oobCode("soon", in: Self.project) })?.isForgotten == true { break }
                try await Task.sleep(for: .milliseconds(5))
                test.clock.advance(milliseconds: 0)
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(try test.store.read { try $0.oobCode("soon", in: Self.project) }?.isForgotten == true)
    }
}
