import HearthDomain
import HearthLedger
import HearthProjections
import HearthTesting
import LMDB
import Testing

@testable import HearthStore

@Suite("store: concurrent commands through group commit")
struct ConcurrencyTests {
    let project = TestStore.project

    @Test func fiftyRacersForOneEmailExactlyOneWins() async throws {
        let test = try TestStore(label: "race")
        defer { try? test.close() }
        let store = test.store
        let hash = PasswordHash(algorithm: "SCRYPT", hash: [1], salt: [2])
        // 1,000 commands from 100 tasks; commands 0, 20, 40, … race for the same email.
        let outcomes = await withTaskGroup(of: [(Int, Result<[StoredEvent], any Error>)].self) { group in
            for task in 0..<100 {
                group.addTask {
                    var results: [(Int, Result<[StoredEvent], any Error>)] = []
                    for step in 0..<10 {
                        let index = task * 10 + step
                        let email = index % 20 == 0 ? "race@x.io" : "user\(index)@x.io"
                        let created = AccountCreated(method: .password, createdAt: 0, email: email, password: hash)
                        do {
                            let events = try await store.execute(
                                .createAccount(TestStore.project, UserID("u\(index)")!, created), metadata: TestStore.user)
                            results.append((index, .success(events)))
                        } catch {
                            results.append((index, .failure(error)))
                        }
                    }
                    return results
                }
            }
            var all: [(Int, Result<[StoredEvent], any Error>)] = []
            for await results in group { all += results.map { ($0.0, $0.1) } }
            return all
        }
        #expect(outcomes.count == 1000)
        let racers = outcomes.filter { $0.0 % 20 == 0 }
        #expect(racers.count == 50)
        let winners = racers.filter { (try? $0.1.get()) != nil }
        #expect(winners.count == 1)
        for (_, result) in racers where (try? result.get()) == nil {
            #expect(throws: AuthError.emailExists) { try result.get() }
        }
        #expect(outcomes.filter { $0.0 % 20 != 0 }.allSatisfy { (try? $0.1.get()) != nil })

        // The global sequence is gapless and holds exactly the accepted events.
        #expect(try Self.sequences(store) == Array(1...UInt64(951)))
        #expect(try store.read { try $0.owner(ofEmail: "race@x.io", in: TestStore.project) } == UserID("u\(winners[0].0)"))
        let statistics = store.environment.writer.statistics
        #expect(statistics.batches < statistics.jobs)
        #expect(try store.audit.verify().isIntact)
    }

    static func sequences(_ store: AccountStore) throws -> [UInt64] {
        var sequences: [UInt64] = []
        try store.environment.read { txn throws in
            try store.ledger.forEachRecord(in: txn) { sequence, _ in
                sequences.append(sequence)
                return .continue
            }
        }
        return sequences
    }

    @Test func executeAllLetsRefusedCommandsFailAlone() async throws {
        let test = try TestStore(label: "bulk")
        defer { try? test.close() }
        let commands: [Command] = (0..<10).map { index in
            .createAccount(project, UserID(index == 5 ? "u0" : "u\(index)")!, AccountCreated(method: .anonymous, createdAt: 0))
        }
        let results = try await test.store.executeAll(commands, metadata: TestStore.admin)
        #expect(results.enumerated().allSatisfy { index, result in (try? result.get()) != nil || index == 5 })
        #expect(throws: AuthError.uidExists) { try results[5].get() }
        #expect(try test.store.read { try $0.accountCount() } == 9)
    }

    @Test func expectedVersionsGuardConcurrentEdits() throws {
        let test = try TestStore(label: "expected")
        defer { try? test.close() }
        let uid = UserID("v")!
        try test.run(.createAccount(project, uid, AccountCreated(method: .anonymous, createdAt: 0)))
        try test.store.executeAndWait(
            .update(project, uid, AccountUpdate(disabled: true)), expecting: .exactly(1), metadata: TestStore.admin)
        #expect(throws: StoreError.wrongExpectedVersion(stream: .account(project, uid), expected: .exactly(1), actual: 2)) {
            try test.store.executeAndWait(
                .update(project, uid, AccountUpdate(disabled: false)), expecting: .exactly(1), metadata: TestStore.admin)
        }
        #expect(try test.account("v")?.disabled == true)
    }
}
