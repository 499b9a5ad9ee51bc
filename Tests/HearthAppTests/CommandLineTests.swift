import Foundation
import HearthDomain
import HearthLedger
import HearthStore
import HearthTesting
import HearthWire
import LMDB
import Testing

/// The `hearth` binary, run as a user would, on a ledger written by the store.
@Suite("hearth CLI: audit and projections")
struct CommandLineTests {
    let project = TestStore.project

    /// Alice's impostor story at known times: created at T, email link at T+1h.
    func ledger() throws -> (TestStore, start: Int64) {
        let test = try TestStore(label: "cli")
        let start = test.clock.now()
        let alice = UserID("alice")!
        try test.run(
            .createAccount(
                project, alice,
                AccountCreated(
                    method: .password, createdAt: start, email: "alice@x.io",
                    password: PasswordHash(algorithm: "SCRYPT", hash: [1], salt: [2]))))
        try test.run(.signIn(project, alice, method: "password", refreshTokenHash: "impostor"))
        test.clock.advance(milliseconds: 3_600_000)
        try test.run(.createAccount(project, UserID("bob")!, AccountCreated(method: .anonymous, createdAt: test.clock.now())))
        try test.run(.completeEmailLinkSignIn(project, alice, email: "alice@x.io", refreshTokenHash: "alice"))
        return (test, start)
    }

    func hearth(_ arguments: [String], data: String) throws -> ProcessResult {
        try runHearth(arguments + ["--data", data])
    }

    @Test func replayPrintsJSONLinesFilteredByAccountTypeAndTime() throws {
        let (test, start) = try ledger()
        try test.close()
        let data = test.directory.path
        let all = try hearth(["audit", "replay", "--project", project.rawValue], data: data)
        #expect(all.status == 0)
        let lines = all.standardOutput.split(separator: "\n")
        #expect(lines.count == 9)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["hash"] is String)
        }
        let alice = try hearth(["audit", "replay", "--project", project.rawValue, "--uid", "alice"], data: data)
        #expect(alice.standardOutput.split(separator: "\n").count == 8)
        #expect(!alice.standardOutput.contains("account/test-project/bob"))
        let removed = try hearth(
            ["audit", "replay", "--type", "account.password_removed", "--type", "account.sessions_revoked"], data: data)
        #expect(removed.standardOutput.split(separator: "\n").map { $0.contains("email_link_verified") } == [true, true])
        // The summary goes to stderr, so stdout stays pure JSON lines.
        #expect(removed.standardError.hasPrefix("replayed 2 events (9 read) in "))
        #expect(alice.standardError.hasPrefix("replayed 8 events (8 read) in "))
        let since = Timestamp.iso8601(milliseconds: start + 1_000)
        let later = try hearth(["audit", "replay", "--since", since, "--format", "text"], data: data)
        #expect(later.standardOutput.split(separator: "\n").count == 6)
        #expect(later.standardOutput.hasPrefix("#4  "))
        let until = try hearth(["audit", "replay", "--until", String(start)], data: data)
        #expect(until.standardOutput.split(separator: "\n").count == 3)
        let bad = try hearth(["audit", "replay", "--since", "last tuesday"], data: data)
        #expect(bad.status != 0)
    }

    @Test func showRebuildsAnAccountAsOfAMoment() throws {
        let (test, start) = try ledger()
        try test.close()
        let data = test.directory.path
        let before = try hearth(
            ["audit", "show", "--project", project.rawValue, "--uid", "alice", "--at", String(start + 60_000)], data: data)
        #expect(before.status == 0)
        #expect(before.standardOutput.contains(#""password" : {"#))
        #expect(before.standardOutput.contains(#""emailVerified" : false"#))
        let now = try hearth(["audit", "show", "--project", project.rawValue, "--uid", "alice"], data: data)
        #expect(!now.standardOutput.contains(#""password" : {"#))
        #expect(now.standardOutput.contains(#""emailVerified" : true"#))
        let never = try hearth(["audit", "show", "--project", project.rawValue, "--uid", "bob", "--at", String(start)], data: data)
        #expect(never.status == 1)
        #expect(never.standardError.contains("no account bob"))
    }

    @Test func verifyNamesTheFirstTamperedEvent() throws {
        let (test, _) = try ledger()
        let store = test.store
        let intact = try store.maintenance.digest()
        try test.close()
        let data = test.directory.path
        let ok = try hearth(["audit", "verify"], data: data)
        #expect(ok.status == 0)
        #expect(ok.standardOutput.contains("ledger intact: 9 events"))
        // Recorded for the console: when, and what the walk found.
        func recorded() -> JSONValue? {
            FileManager.default.contents(atPath: data + "/audit-verification.json").flatMap { JSONValue.parse(Array($0)) }
        }
        #expect(recorded()?["intact"] == true && recorded()?["eventsChecked"] == 9 && recorded()?["verifiedAt"] != nil)

        // Flip one byte of event 5, as an attacker with file access might.
        let environment = try Environment(path: data)
        let ledger = try Ledger.open(environment, ledgerKey: nil)
        try environment.writer.perform { txn in
            var record = try txn.get(ledger.events, BigEndianUInt64(5)) ?? []
            record[record.count / 3] ^= 0x20
            try txn.put(ledger.events, BigEndianUInt64(5), record)
        }
        environment.close()
        let tampered = try hearth(["audit", "verify"], data: data)
        #expect(tampered.status == 1)
        #expect(tampered.standardError.contains("FAILED at sequence 5"))
        #expect(recorded()?["intact"] == false && recorded()?["failedAt"] == 5)
        #expect(!intact.isEmpty)
    }

    @Test func rebuildPrintsTheDigestAndRefusesWhileTheDirectoryIsHeld() throws {
        let (test, _) = try ledger()
        let live = try test.store.maintenance.digest()
        try test.close()
        let data = test.directory.path
        let rebuilt = try hearth(["projections", "rebuild"], data: data)
        #expect(rebuilt.status == 0)
        #expect(rebuilt.standardOutput.contains("events:    9"))
        #expect(rebuilt.standardOutput.contains("digest:    \(live)"))
        #expect(rebuilt.standardOutput.contains("matches the projections it replaced"))
        let digest = try hearth(["projections", "digest"], data: data)
        #expect(digest.standardOutput == live + "\n")

        let daemon = try DataDirectory(data).open(as: "hearth serve")
        let refused = try hearth(["projections", "rebuild"], data: data)
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("in use"))
        #expect(refused.standardError.contains("hearth serve"))
        daemon.close()
        // Read-only tools work beside the holder.
        #expect(try hearth(["audit", "verify"], data: data).status == 0)
    }

    @Test func demoAccountsAndASmallBenchmarkRun() throws {
        let directory = TemporaryDirectory("demo")
        let demo = try runHearth(["demo", "--data", directory.path + "/data", "--accounts", "300"])
        #expect(demo.status == 0)
        let held = demo.standardOutput.firstMatch(of: /holds (\d+) events, the projections (\d+) accounts/)
        #expect((held.flatMap { Int($0.2) } ?? 0) >= 300)
        #expect(try runHearth(["audit", "verify", "--data", directory.path + "/data"]).status == 0)

        let bench = try runHearth([
            "bench", "ledger", "--directory", directory.path + "/bench", "--events", "3000", "--commands", "256", "--commits", "20",
            "--saturating-submitters", "32",
        ])
        #expect(bench.status == 0)
        for row in [
            "LMDB commit per event", "Hearth group commit", "Durable sign-up, personal data sealed",
            "Writer's CPU time per sign-up job, sealed", "Writer per durable sign-up, sealed: its commit",
            "Hearth group commit, one synchronous follower", "The same, one synchronous follower (capacity)", "Projection rebuild",
            "One account's 100-event history, by uid",
            "Key table per account",
        ] {
            #expect(bench.standardOutput.contains(row), "no \(row) row in:\n\(bench.standardOutput)")
        }
    }

    /// The sign-up benchmark over HTTP: two servers, wrk in turns, both rows with rates; its
    /// scratch directory removed afterwards.
    @Test func theSignUpBenchmarkOverHTTPRuns() throws {
        let directory = TemporaryDirectory("bench-sign-up")
        let scratch = directory.path + "/scratch"
        let bench = try runHearth(["bench", "sign-up", "--directory", scratch, "--turns", "2", "--seconds", "1", "--connections", "8"])
        #expect(bench.status == 0, "\(bench.standardError)")
        // Each row's rate: its first number ("3,853").
        let rates = bench.standardOutput.split(separator: "\n").filter { $0.hasPrefix("Anonymous sign-up over HTTP") }.compactMap { line in
            line.split(separator: " ").first { $0.first?.isNumber == true }.flatMap { Double($0.filter { $0 != "," }) }
        }
        #expect(rates.count == 2 && rates.allSatisfy { $0 > 0 }, "\(bench.standardOutput)")
        #expect(bench.standardOutput.contains("% of sign-up before sealing"))
        #expect(!FileManager.default.fileExists(atPath: scratch))
    }

    @Test func readOnlyToolsSayWhenThereIsNoLedger() throws {
        let empty = TemporaryDirectory("empty")
        let result = try hearth(["audit", "verify"], data: empty.path + "/nothing")
        #expect(result.status != 0)
        #expect(result.standardError.contains("no Hearth ledger"))
    }
}

@Suite("hearth CLI beside a live writer")
struct BesideALiveWriterTests {
    @Test func readToolsWorkAndRebuildRefusesWhileAnotherProcessWrites() throws {
        let directory = TemporaryDirectory("live")
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: BuiltProducts.path("hearth-crash-harness"))
        writer.arguments = [directory.path, "live"]
        let pipe = Pipe()
        writer.standardOutput = pipe
        try writer.run()
        defer {
            writer.terminate()
            writer.waitUntilExit()
        }
        // Wait until it has acknowledged a few hundred appends.
        var seen = 0
        while seen < 300 {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += chunk.filter { $0 == UInt8(ascii: "\n") }.count
        }
        let verify = try runHearth(["audit", "verify", "--data", directory.path])
        #expect(verify.status == 0, "\(verify.standardError)")
        #expect(verify.standardOutput.hasPrefix("ledger intact: "))
        let replay = try runHearth(["audit", "replay", "--data", directory.path, "--type", "account.created"])
        #expect(replay.status == 0)
        #expect(replay.standardOutput.split(separator: "\n").count >= 50)
        let rebuild = try runHearth(["projections", "rebuild", "--data", directory.path])
        #expect(rebuild.status != 0)
        #expect(rebuild.standardError.contains("crash harness"))
    }
}
