import Foundation
import HearthDomain
import HearthLedger
import HearthTesting
import HearthTools
import LMDB
import Testing

@testable import HearthStore

/// A child appends under load and is SIGKILLed at random moments, 20 times. After each kill
/// the chain verifies, every acknowledged append is there with the same hash, projections
/// committed with the ledger (checkpoint == head), and a rebuild reproduces them exactly.
@Suite("crash safety: SIGKILL mid-write")
struct CrashSafetyTests {
    @Test func killedWritersLoseNothingAcknowledged() throws {
        let directory = TemporaryDirectory("crash")
        var generator = SystemRandomNumberGenerator()
        var acknowledgedTotal = 0
        var forgotten = 0
        for round in 1...20 {
            let acknowledged = try runAndKill(
                directory.path, run: "r\(round)", afterMilliseconds: Int.random(in: 30...400, using: &generator))
            acknowledgedTotal += acknowledged.count

            let store = try DataDirectory(directory.path).openForReading()
            let outcome = try store.audit.verify()
            #expect(outcome.isIntact, "round \(round): \(String(describing: outcome.failure))")
            let missing = try store.environment.read { txn in
                try acknowledged.filter { sequence, hash in
                    try store.ledger.envelope(at: sequence, in: txn).map { hex($0.hash) } != hash
                }
            }
            #expect(missing.isEmpty, "round \(round): \(missing.count) acknowledged appends missing")
            #expect(try store.maintenance.eventsBehind() == 0, "round \(round): projections not committed with the ledger")
            forgotten += try Self.expectKeysMatchTheirStreams(store, round: round)
            let live = try store.maintenance.digest()
            store.close()

            let summary = try RebuildTool(directory: DataDirectory(directory.path)).run()
            #expect(summary.digestBefore == live)
            #expect(summary.matches, "round \(round): rebuild differs from the live projections")
        }
        // The kills must have landed while work was being acknowledged, not before it began.
        #expect(acknowledgedTotal > 100)
        #expect(forgotten > 0)
    }

    /// Every account's key is destroyed exactly when its stream ends with an event that forgets
    /// (deleted by its user, erased by an admin), live otherwise: a kill never lands between
    /// the event and the key's destruction. Returns how many accounts were forgotten.
    static func expectKeysMatchTheirStreams(_ store: AccountStore, round: Int) throws -> Int {
        let project = ProjectID("crash")!
        var last: [UserID: StoredEvent] = [:]
        try store.audit.replay(StoreAudit.Filter(project: project)) { event in
            if case .account(_, let uid) = event.stream { last[uid] = event }
        }
        var forgotten = 0
        for (uid, event) in last {
            let key = try store.environment.read { try store.ledger.keys.state(of: .account(project, uid), in: $0) }
            if PersonalData.forgets(event.payload) {
                forgotten += 1
                #expect(key == .destroyed(generation: 1), "round \(round): \(uid) ended with \(event.type.name), key \(key)")
            } else {
                #expect(key == .live(generation: 1), "round \(round): \(uid) ended with \(event.type.name), key \(key)")
            }
        }
        return forgotten
    }

    /// The scheduler purging 20,000 due accounts in batches of 32 is SIGKILLed five times; after
    /// each kill every account is either still there, never purged, with its key, or gone with
    /// exactly one `account.anonymous_purged` and its key destroyed; the chain verifies and a rebuild reproduces the projections.
    /// A last run purges the rest, each account once.
    @Test func killedCleanupPurgesEachAccountOnce() throws {
        let directory = TemporaryDirectory("crash-purge")
        let project = ProjectID("crash")!
        let uids = (0..<20_000).map { UserID("p\($0)")! }
        func check(_ round: String) throws -> Int {
            let store = try DataDirectory(directory.path).openForReading()
            defer { store.close() }
            #expect(try store.audit.verify().isIntact, "\(round)")
            #expect(try store.maintenance.eventsBehind() == 0, "\(round)")
            var left = 0
            for uid in uids {
                let purges = try store.audit.events(of: .account(project, uid)).filter { $0.type.name == "account.anonymous_purged" }
                let exists = try store.read { try $0.account(uid, in: project) } != nil
                #expect(purges.count == (exists ? 0 : 1), "\(round): \(uid) exists \(exists), purged \(purges.count) times")
                // The purge and its key's destruction are one write: never one without the other.
                let key = try store.environment.read { try store.ledger.keys.state(of: .account(project, uid), in: $0) }
                #expect(key == (exists ? .live(generation: 1) : .destroyed(generation: 1)), "\(round): \(uid) \(key)")
                if exists { left += 1 }
            }
            return left
        }
        var generator = SystemRandomNumberGenerator()
        var lefts: [Int] = []
        for round in 1...5 {
            _ = try runAndKill(directory.path, run: "purge", afterMilliseconds: Int.random(in: 20...100, using: &generator))
            lefts.append(try check("round \(round)"))
            let summary = try RebuildTool(directory: DataDirectory(directory.path)).run()
            #expect(summary.matches, "round \(round): rebuild differs from the live projections")
        }
        print("left after each kill: \(lefts)")
        // The kills landed mid-purge: some were purged, some were left.
        #expect(lefts.first.map { $0 < 20_000 && $0 > 0 } == true, "\(lefts)")
        let finish = Process()
        finish.executableURL = URL(fileURLWithPath: BuiltProducts.path("hearth-crash-harness"))
        finish.arguments = [directory.path, "purge"]
        finish.standardOutput = FileHandle.nullDevice
        try finish.run()
        finish.waitUntilExit()
        #expect(finish.terminationStatus == 0)
        #expect(try check("after the last run") == 0)
    }

    /// Starts the harness, waits until it is appending, kills it after `delay`, and returns
    /// every acknowledgement it wrote before dying.
    private func runAndKill(_ directory: String, run: String, afterMilliseconds delay: Int) throws -> [(UInt64, String)] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProducts.path("hearth-crash-harness"))
        process.arguments = [directory, run]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let reader = pipe.fileHandleForReading
        var output = Data()
        while !String(decoding: output, as: UTF8.self).contains("ready\n") {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            output.append(chunk)
        }
        usleep(useconds_t(delay * 1000))
        kill(process.processIdentifier, SIGKILL)
        output.append(reader.readDataToEndOfFile())
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let sequence = UInt64(parts[0]) else { return nil }
            return (sequence, String(parts[1]))
        }
    }
}
