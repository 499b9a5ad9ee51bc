import Foundation
import HearthDomain
import HearthLedger
import HearthTesting
import LMDB
import Testing

@Suite("ledger: records, streams, hash chain")
struct LedgerTests {
    let directory = TemporaryDirectory("ledger")
    let project = ProjectID("ledger-test")!
    let metadata = Metadata(actor: .admin, actorId: "owner", requestId: "r-1", clientIp: "127.0.0.1")
    static let ledgerKey = [UInt8](repeating: 7, count: 32)

    func withLedger(_ body: (Environment, Ledger) throws -> Void) throws {
        let environment = try Environment(path: directory.path)
        defer { environment.close() }
        try body(environment, try Ledger.open(environment, ledgerKey: Self.ledgerKey))
    }

    @Test func everyEventTypeHasASampleAndRoundTrips() throws {
        let sampled = Set(SampleEvents.all.map(\.type))
        #expect(sampled.isSuperset(of: EventType.all))
        #expect(sampled.isSubset(of: EventType.all + EventType.historical))
        for payload in SampleEvents.all {
            let parts = PayloadCodec.encode(payload)
            let decoded = try parts.open.withUnsafeBytes { try PayloadCodec.decode(payload.type, from: $0, personal: parts.personal) }
            #expect(decoded == payload)
            // A version that seals has a personal part, one that does not has none.
            #expect((parts.personal != nil) == !PersonalData.fields(of: payload.type).isEmpty)
        }
    }

    /// Ledgers written before v2 hold password hashes without key, separator or input order.
    @Test func version1PasswordHashesAreUpcastOnRead() throws {
        let hash = PasswordHash(
            algorithm: "SCRYPT", hash: [1, 2], salt: [3], memoryCost: 14, blockSize: 8, parallelization: 1, keyLength: 32)
        func writeVersion1(_ writer: inout ByteWriter) {
            writer.write(hash.algorithm.rawValue)
            writer.write(bytes: hash.hash)
            writer.write(bytes: hash.salt)
            for value in [hash.rounds, hash.memoryCost, hash.blockSize, hash.parallelization, hash.keyLength] {
                writer.write(value)
            }
        }
        var passwordSet = ByteWriter()
        writeVersion1(&passwordSet)
        passwordSet.write(PasswordSet.Reason.rehashed.rawValue)
        let set = try passwordSet.bytes.withUnsafeBytes { try PayloadCodec.decode(.passwordSetV1, from: $0) }
        #expect(set == .passwordSet(PasswordSet(password: hash, reason: .rehashed)))

        var created = ByteWriter()
        created.write(CreationMethod.password.rawValue)
        created.write(Int64(7))
        created.write("v1@x.io" as String?)
        created.write(false)
        created.write(UInt8(1))
        writeVersion1(&created)
        for _ in 0..<3 { created.write(nil as String?) }
        created.write(varint: 0)
        created.write(nil as String?)
        created.write(false)
        created.write(nil as Int64?)
        let account = try created.bytes.withUnsafeBytes { try PayloadCodec.decode(.accountCreatedV1, from: $0) }
        #expect(account == .accountCreated(AccountCreated(method: .password, createdAt: 7, email: "v1@x.io", password: hash)))

        // account.anonymous_purged v1: the due time only; no rule.
        var purged = ByteWriter()
        purged.write(Int64(99))
        let purge = try purged.bytes.withUnsafeBytes { try PayloadCodec.decode(.anonymousPurgedV1, from: $0) }
        #expect(purge == .anonymousPurged(AnonymousPurged(dueAt: 99)))

        // project.config_changed v1: ends after oneAccountPerEmail.
        var config = ByteWriter()
        for value in [true, nil, nil] as [Bool?] { config.write(value) { $0.write($1) } }
        for _ in 0..<3 { config.write(nil as String?) }
        config.write(true as Bool?) { $0.write($1) }
        config.write(nil as Bool?) { $0.write($1) }
        let changed = try config.bytes.withUnsafeBytes { try PayloadCodec.decode(.projectConfigChangedV1, from: $0) }
        #expect(changed == .projectConfigChanged(ProjectConfigChange(emailPasswordEnabled: true, anonymousCleanup: true)))

        // account.provider_unlinked v1: the provider only; every v1 unlinking was the user's or an admin's.
        var unlinked = ByteWriter()
        unlinked.write("github.com")
        let unlink = try unlinked.bytes.withUnsafeBytes { try PayloadCodec.decode(.providerUnlinkedV1, from: $0) }
        #expect(unlink == .providerUnlinked(ProviderUnlinked(providerId: "github.com", reason: .unlinked)))
    }

    /// Records written before personal data was sealed (format 1) read as they were: plain.
    @Test func format1RecordsReadAsPlainText() throws {
        var record = ByteWriter()
        record.write(UInt8(1))
        record.write(bigEndian: 1)
        record.write(bigEndian: 5)
        record.write(varint: 1)
        record.write("account/ledger-test/old")
        record.write("account.email_verified")
        record.write(varint: 1)
        record.write("end_user")
        record.write("old" as String?)
        record.write(nil as String?)
        record.write("198.51.100.7" as String?)
        var payload = ByteWriter()
        payload.write("old@x.io")
        record.write(bytes: payload.bytes)
        record.write(raw: [UInt8](repeating: 0, count: 64))
        try withLedger { environment, ledger in
            let envelope = try environment.read { txn in try record.bytes.withUnsafeBytes { try ledger.decode($0, in: txn) } }
            #expect(envelope.payload == .emailVerified(EmailVerified(email: "old@x.io")))
            #expect(envelope.metadata.clientIp == "198.51.100.7" && envelope.personalData == .none)
            // A sealing version in a format 1 record is damage, not an erased event.
            var sealingType = ByteWriter()
            sealingType.write(raw: record.bytes.prefix(9 + 8 + 1 + 24 + 23))
            sealingType.write(varint: 2)
            sealingType.write(raw: record.bytes.dropFirst(9 + 8 + 1 + 24 + 23 + 1))
            #expect(throws: BinaryFormatError.self) {
                try environment.read { txn in try sealingType.bytes.withUnsafeBytes { try ledger.decode($0, in: txn) } }
            }
        }
    }

    @Test func unknownTypesAndTruncatedPayloadsAreErrorsNotGuesses() throws {
        #expect(throws: BinaryFormatError.unknownEventType("account.teleported", version: 1)) {
            try [UInt8]().withUnsafeBytes { try PayloadCodec.decode(EventType("account.teleported", version: 1), from: $0) }
        }
        #expect(throws: BinaryFormatError.unknownEventType("account.created", version: 9)) {
            try [UInt8]().withUnsafeBytes { try PayloadCodec.decode(EventType("account.created", version: 9), from: $0) }
        }
        let parts = PayloadCodec.encode(SampleEvents.all[1])
        #expect(throws: BinaryFormatError.self) {
            try parts.open.dropLast().withUnsafeBytes { try PayloadCodec.decode(.accountCreated, from: $0, personal: parts.personal) }
        }
        #expect(throws: BinaryFormatError.self) {
            try parts.open.withUnsafeBytes { try PayloadCodec.decode(.accountCreated, from: $0, personal: parts.personal! + [0]) }
        }
    }

    @Test("a stream's last events through the stream index: in stream order, with its total, none of a neighbour's")
    func lastEventsOfAStream() throws {
        try withLedger { environment, ledger throws in
            let alice = StreamID.account(project, UserID("alice")!)
            // A name that extends alice's: its index entries sort right after hers.
            let alicia = StreamID.account(project, UserID("alice2")!)
            try environment.writer.perform { txn in
                for round in 0..<7 {
                    _ = try ledger.append([.accountDisabled], to: alice, metadata: metadata, at: Int64(round), in: txn)
                    _ = try ledger.append([.accountEnabled], to: alicia, metadata: metadata, at: Int64(round), in: txn)
                }
            }
            try environment.read { txn throws in
                let last3 = try ledger.events(of: alice, last: 3, in: txn)
                #expect(last3.total == 7 && last3.events.map(\.sequence) == [9, 11, 13])
                #expect(last3.events.map(\.streamVersion) == [5, 6, 7])
                let all = try ledger.events(of: alice, last: 100, in: txn)
                let whole = try ledger.events(of: alice, in: txn).map(\.sequence)
                #expect(all.total == 7 && all.events.map(\.sequence) == whole)
                #expect(try ledger.events(of: alicia, last: 1, in: txn).events.map(\.sequence) == [14])
                #expect(try ledger.events(of: alice, last: 0, in: txn).events.isEmpty)
                let nobody = try ledger.events(of: .account(project, UserID("nobody")!), last: 5, in: txn)
                #expect(nobody.total == 0 && nobody.events.isEmpty)
            }
        }
    }

    @Test func appendsAssignGaplessSequencesAndStreamVersions() throws {
        try withLedger { environment, ledger throws in
            let alice = StreamID.account(project, UserID("alice")!)
            let bob = StreamID.account(project, UserID("bob")!)
            let appended = try environment.writer.perform { txn in
                try ledger.append(
                    Array(SampleEvents.all.prefix(3)), to: alice, expecting: .noStream, metadata: metadata, at: 1_000, in: txn)
                    + ledger.append([.accountDisabled], to: bob, metadata: metadata, at: 999, in: txn)
                    + ledger.append([.accountEnabled], to: alice, expecting: .exactly(3), metadata: metadata, at: 2_000, in: txn)
            }
            #expect(appended.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(appended.map(\.streamVersion) == [1, 2, 3, 1, 4])
            // Recorded-at never goes backwards along the sequence.
            #expect(appended.map(\.recordedAt) == [1_000, 1_000, 1_000, 1_000, 2_000])
            #expect(zip(appended.dropFirst(), appended).allSatisfy { $0.previousHash == $1.hash })
            try environment.read { txn throws in
                #expect(try ledger.version(of: alice, in: txn) == 4)
                #expect(try ledger.version(of: bob, in: txn) == 1)
                #expect(try ledger.version(of: .account(project, UserID("nobody")!), in: txn) == 0)
                #expect(try ledger.events(of: alice, in: txn).map(\.sequence) == [1, 2, 3, 5])
                #expect(try ledger.envelope(at: 4, in: txn) == appended[3])
                #expect(try ledger.head(in: txn).sequence == 5)
                #expect(try ledger.firstSequence(recordedAtOrAfter: 1_500, in: txn) == 5)
                #expect(try ledger.firstSequence(recordedAtOrAfter: 0, in: txn) == 1)
                #expect(try ledger.firstSequence(recordedAtOrAfter: 2_001, in: txn) == nil)
                // Raw records, up from a sequence and down from one (what a rebuild's decoding
                // reads, newest first), each record the one stored under its sequence.
                typealias Visit = (_ body: (UInt64, UnsafeRawBufferPointer) throws -> IterationControl) throws -> Void
                func records(stoppingAt last: UInt64? = nil, _ visit: Visit) throws -> [UInt64] {
                    var seen: [UInt64] = []
                    try visit { (sequence: UInt64, record: UnsafeRawBufferPointer) throws -> IterationControl in
                        #expect(try RecordFormat.sequence(of: record) == sequence)
                        seen.append(sequence)
                        return sequence == last ? .stop : .continue
                    }
                    return seen
                }
                #expect(try records { try ledger.forEachRecord(from: 2, in: txn, $0) } == [2, 3, 4, 5])
                #expect(try records(stoppingAt: 2) { try ledger.forEachRecord(downFrom: 4, in: txn, $0) } == [4, 3, 2])
                #expect(try records { try ledger.forEachRecord(downFrom: 9, in: txn, $0) } == [5, 4, 3, 2, 1])
                #expect(try records { try ledger.forEachRecord(downFrom: 1, in: txn, $0) } == [1])
            }
        }
    }

    /// No stream key could forget a client address on a project's stream (an operator's
    /// settings): such events keep none, in the record or in what the append returns, and an
    /// account's is sealed, never in plain text.
    @Test func aClientAddressIsSealedOrNotKept() throws {
        try withLedger { environment, ledger throws in
            let operatorAddress = Metadata(actor: .admin, actorId: "owner", requestId: "r-2", clientIp: "203.0.113.250")
            let appended = try environment.writer.perform { txn in
                try ledger.append([.accountEnabled], to: .project(project), metadata: operatorAddress, at: 1, in: txn)
                    + ledger.append(
                        [.accountDisabled], to: .account(project, UserID("carol")!), metadata: operatorAddress, at: 1, in: txn)
            }
            #expect(appended[0].metadata.clientIp == nil && appended[0].personalData == .none)
            #expect(appended[1].metadata.clientIp == "203.0.113.250" && appended[1].personalData == .sealed)
            try environment.read { txn throws in
                #expect(try ledger.envelope(at: 1, in: txn)?.metadata.clientIp == nil)
                #expect(try ledger.envelope(at: 2, in: txn)?.metadata.clientIp == "203.0.113.250")
                try ledger.forEachRecord(in: txn) { sequence, record in
                    #expect(!bytes(record, contain: "203.0.113.250"), "record \(sequence) holds the address in plain text")
                    return .continue
                }
            }
        }
    }

    @Test func aWrongExpectedVersionAppendsNothing() throws {
        try withLedger { environment, ledger throws in
            let stream = StreamID.project(project)
            _ = try environment.writer.perform { txn in try ledger.append([.accountEnabled], to: stream, metadata: metadata, at: 1, in: txn)
            }
            #expect(throws: LedgerError.wrongExpectedVersion(stream: stream, expected: .noStream, actual: 1)) {
                try environment.writer.perform { txn in
                    try ledger.append([.accountEnabled], to: stream, expecting: .noStream, metadata: metadata, at: 2, in: txn)
                }
            }
            #expect(try environment.read { try ledger.head(in: $0).sequence } == 1)
        }
    }

    @Test func theVerifierFindsTheFirstAlteredRecord() throws {
        try withLedger { environment, ledger throws in
            let stream = StreamID.account(project, UserID("t")!)
            _ = try environment.writer.perform { txn in
                try ledger.append(
                    SampleEvents.all.filter { $0.type.name.hasPrefix("account.") }, to: stream, metadata: metadata, at: 5, in: txn)
            }
            var verifier = LedgerVerifier(ledger: ledger, environment: environment)
            verifier.batchSize = 3
            let intact = try verifier.verify()
            #expect(intact.isIntact)
            #expect(intact.eventsChecked == SampleEvents.all.filter { $0.type.name.hasPrefix("account.") }.count)
            // Flip one byte in the middle of event 7.
            try environment.writer.perform { txn in
                var record = try #require(try txn.get(ledger.events, BigEndianUInt64(7)))
                record[record.count / 2] ^= 0x01
                try txn.put(ledger.events, BigEndianUInt64(7), record)
            }
            let outcome = try verifier.verify()
            #expect(outcome.failure?.sequence == 7)
            #expect(outcome.failure?.reason.contains("hash mismatch") == true)
            #expect(outcome.eventsChecked == 6)
        }
    }

    @Test func removingARecordIsAGap() throws {
        try withLedger { environment, ledger throws in
            let stream = StreamID.project(project)
            _ = try environment.writer.perform { txn in
                try ledger.append([.accountEnabled, .accountDisabled, .accountEnabled], to: stream, metadata: metadata, at: 1, in: txn)
            }
            try environment.writer.perform { txn in _ = try txn.delete(ledger.events, BigEndianUInt64(2)) }
            let outcome = try LedgerVerifier(ledger: ledger, environment: environment).verify()
            #expect(outcome.failure?.sequence == 2)
            #expect(outcome.failure?.reason.contains("gap") == true)
        }
    }

    @Test func recordsRenderAsSortedJSON() throws {
        try withLedger { environment, ledger throws in
            let envelope = try environment.writer.perform { txn in
                try ledger.append(
                    [.customClaimsSet(CustomClaimsSet(claims: #"{"a":1}"#))], to: .account(project, UserID("j")!), metadata: metadata,
                    at: 0, in: txn)
            }[0]
            let line = try EventJSON.line(envelope)
            #expect(line.hasPrefix(#"{"hash":""#))
            #expect(line.contains(#""payload":{"claims":"{\"a\":1}"}"#))
            #expect(line.contains(#""recordedAt":"1970-01-01T00:00:00.000Z""#))
            #expect(line.contains(#""stream":"account/ledger-test/j""#))
            #expect(!line.contains("\n"))
        }
    }
}

@Suite("schemas/ covers every event type")
struct SchemaCatalogTests {
    @Test func thereIsExactlyOneSchemaPerEventTypeAndVersion() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let files = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("schemas/events").path)
        let expected = (EventType.all + EventType.historical).map { "\($0.name).v\($0.version).schema.json" }
        #expect(Set(files) == Set(expected))
    }

    /// The fields `schemas/` marks `"x-personal": true` are the ones the ledger seals
    /// (`PersonalData.fields`), type by type, and the envelope's client address: the README
    /// and the schemas name what is forgotten, and neither may drift from the code.
    @Test func theSchemasMarkExactlyTheFieldsTheLedgerSeals() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        func marked(_ file: String) throws -> [String] {
            let data = try Data(contentsOf: root.appendingPathComponent("schemas/" + file))
            var paths: [String] = []
            func walk(_ node: Any, _ path: [String]) {
                guard let node = node as? [String: Any] else { return }
                if node["x-personal"] as? Bool == true { paths.append(path.joined(separator: ".")) }
                for (name, child) in node["properties"] as? [String: Any] ?? [:] { walk(child, path + [name]) }
            }
            walk(try JSONSerialization.jsonObject(with: data), [])
            return paths.sorted()
        }
        for type in EventType.all {
            let payloadFields = try marked("events/\(type.name).v\(type.version).schema.json").map { path in
                path.hasPrefix("payload.") ? String(path.dropFirst("payload.".count)) : path
            }
            #expect(payloadFields == PersonalData.fields(of: type).sorted(), "\(type)")
        }
        #expect(try marked("envelope.v1.schema.json") == [PersonalData.metadataField])
    }
}
