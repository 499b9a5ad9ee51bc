import HearthDomain
import HearthLedger
import HearthTesting
import LMDB
import PropertyBased
import Testing

/// Damaged bytes must give an error, never a crash: flip, truncate and extend real records
/// and payloads at random.
@Suite("ledger: corrupt records are errors, not crashes")
struct CorruptRecordProperties {
    /// The ledger stays open for the suite: damaged records are decoded with its keys, so
    /// their sealed parts are opened too.
    static let ledger: (Environment, Ledger, TemporaryDirectory) = {
        let directory = TemporaryDirectory("corrupt")
        let environment = try! Environment(path: directory.path)
        return (environment, try! Ledger.open(environment, ledgerKey: [UInt8](repeating: 9, count: 32)), directory)
    }()

    static func decode(_ record: [UInt8]) throws -> EventEnvelope {
        let (environment, ledger, _) = Self.ledger
        return try environment.read { txn in try record.withUnsafeBytes { try ledger.decode($0, in: txn) } }
    }

    static let records: [[UInt8]] = {
        let (environment, ledger, _) = Self.ledger
        let project = ProjectID("fuzz")!
        return try! environment.writer.perform { txn in
            try SampleEvents.all.flatMap { payload in
                try ledger.append(
                    [payload], to: SampleEvents.stream(for: payload, project: project),
                    metadata: Metadata(actor: .cli, actorId: "fuzz", requestId: "r", clientIp: "::1"), at: 1, in: txn)
            }.map { envelope in try txn.get(ledger.events, BigEndianUInt64(envelope.sequence))! }
        }
    }()

    /// Applies mutations chosen by number: flip a byte, cut the tail, or append garbage.
    static func mutate(_ record: [UInt8], _ numbers: [Int]) -> [UInt8] {
        var bytes = record
        for n in numbers {
            guard !bytes.isEmpty else { break }
            switch n % 3 {
            case 0: bytes[(n / 3) % bytes.count] ^= UInt8(truncatingIfNeeded: n / 7 | 1)
            case 1: bytes.removeLast(min(bytes.count, (n / 3) % 40))
            default: bytes += Array(repeating: UInt8(truncatingIfNeeded: n), count: (n / 3) % 12)
            }
        }
        return bytes
    }

    @Test func damagedRecordsNeverCrashTheDecoder() async {
        await propertyCheck(count: 400, input: Gen.int(in: 0...Self.records.count - 1), Gen.int(in: 0...1_000_000).array(of: 1...6)) {
            index, numbers in
            let damaged = Self.mutate(Self.records[index], numbers)
            let envelope = try? Self.decode(damaged)
            if damaged == Self.records[index] { #expect(envelope != nil) }
        }
    }

    @Test func randomPayloadBytesNeverCrashAnyDecoder() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...255).array(of: 0...80)) { numbers in
            let bytes = numbers.map { UInt8($0) }
            for decoder in PayloadCodec.decoders {
                _ = bytes.withUnsafeBytes { try? decoder.decode($0) }
                _ = bytes.withUnsafeBytes { try? decoder.decode($0, personal: .opened($0)) }
            }
        }
    }

    @Test func hugeVersionNumbersAreErrors() throws {
        // A type version varint above Int.max.
        var writer = ByteWriter()
        writer.write(UInt8(1))
        writer.write(bigEndian: 1)
        writer.write(bigEndian: 0)
        writer.write(varint: 1)
        writer.write("project/fuzz")
        writer.write("project.config_changed")
        writer.write(varint: UInt64.max)
        #expect(throws: BinaryFormatError.self) { try Self.decode(writer.bytes) }
    }
}
