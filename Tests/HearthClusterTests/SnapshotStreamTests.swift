import Foundation
import HearthStore
import HearthTesting
import NIOCore
import Testing

@testable import HearthCluster

/// A new node's side of the snapshot stream: each file written whole under its own name, cut
/// anywhere on the way; a name that is not a data directory's file, or a stream that ends inside
/// a file, refused.
@Suite("cluster: reading the leader's snapshot stream")
struct SnapshotStreamTests {
    static func stream(_ files: [(String, [UInt8])]) -> [UInt8] {
        files.flatMap { name, bytes in SnapshotSource.header(name: name, size: bytes.count) + bytes }
    }

    static func read(_ stream: [UInt8], cutEvery step: Int, into directory: String) throws -> SnapshotDownload.StreamReader {
        var reader = SnapshotDownload.StreamReader(directory: directory)
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + step)
            try reader.consume(ByteBuffer(bytes: stream[offset..<end]).readableBytesView)
            offset = end
        }
        return reader
    }

    @Test("files written whole, however the stream is cut", arguments: [1, 7, 64, 1 << 20])
    func files(step: Int) throws {
        let directory = TemporaryDirectory("snapshot")
        let ledger = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let key = Array("a ledger key".utf8)
        let reader = try Self.read(
            Self.stream([("data.mdb", ledger), ("ledger-key", key), ("secrets-key", [])]), cutEvery: step,
            into: directory.path)
        try reader.end()
        #expect(reader.files.map(\.name) == ["data.mdb", "ledger-key", "secrets-key"])
        #expect(FileManager.default.contents(atPath: directory.path + "/data.mdb") == Data(ledger))
        #expect(FileManager.default.contents(atPath: directory.path + "/ledger-key") == Data(key))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasSuffix(".partial") })
    }

    @Test("a path, a file no data directory holds, twice the same file, a stream cut short, no ledger: refused")
    func refusals() throws {
        let directory = TemporaryDirectory("snapshot")
        for name in ["../escape", "notes.txt", ""] {
            #expect(throws: JoinError.self) { try Self.read(Self.stream([(name, [1, 2, 3])]), cutEvery: 5, into: directory.path) }
        }
        #expect(throws: JoinError.self) {
            try Self.read(Self.stream([("ledger-key", [1]), ("ledger-key", [2])]), cutEvery: 3, into: directory.path)
        }
        let whole = Self.stream([("data.mdb", [1, 2, 3, 4])])
        let cut = try Self.read(Array(whole.dropLast()), cutEvery: 4, into: directory.path)
        #expect(throws: JoinError.self) { try cut.end() }
        let keysOnly = try Self.read(Self.stream([("secrets-key", [9])]), cutEvery: 4, into: directory.path)
        #expect(throws: JoinError.self) { try keysOnly.end() }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/../escape"))
    }
}
