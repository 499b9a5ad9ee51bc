import HearthTesting
import LMDB
import Testing

/// Puts through a writing cursor: in any order, appended, refused when told not to overwrite,
/// and counted as writes (a job that fails after them is rolled back, not committed half-done).
@Suite("LMDB writing cursors")
struct WriteCursorTests {
    let directory = TemporaryDirectory("lmdb-cursor")

    @Test("keys put in any order read back sorted; appends go last; an existing key is refused without overwrite")
    func putsInAnyOrder() throws {
        let environment = try Environment(path: directory.path)
        defer { environment.close() }
        let index: Database<[UInt8], BigEndianUInt64> = try environment.openDatabase(named: "index")
        let log: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "log")
        // Enough keys for several pages, so puts move the cursor between them.
        let keys = (0..<3_000).map { n in Array("stream-\((n * 7_919) % 3_000)".utf8) + [0] }
        try environment.writer.perform { txn in
            try txn.withWriteCursor(index) { cursor in
                for (n, key) in keys.enumerated() { try cursor.put(key, BigEndianUInt64(UInt64(n))) }
                let existing = keys[5]
                let refused = existing.withUnsafeBytes { key in
                    #expect(throws: LMDBError.keyExists) { try cursor.put(encodedKey: key, BigEndianUInt64(1), options: .noOverwrite) }
                }
                #expect(refused != nil)
            }
            try txn.withWriteCursor(log) { cursor in
                for sequence: UInt64 in 1...2_000 {
                    try cursor.put(BigEndianUInt64(sequence), [UInt8](repeating: 1, count: 200), options: .append)
                }
                #expect(throws: LMDBError.keyExists) { try cursor.put(BigEndianUInt64(7), [], options: .append) }
            }
        }
        try environment.snapshot { txn throws in
            var read: [[UInt8]] = []
            try txn.forEach(index) { key, value in
                read.append(Array(key))
                let position = Int(try BigEndianUInt64(decoding: value).value)
                #expect(keys[position] == Array(key))
                return .continue
            }
            #expect(read == keys.sorted { $0.lexicographicallyPrecedes($1) })
            #expect(try txn.count(log) == 2_000)
            #expect(try txn.get(log, BigEndianUInt64(2_000))?.count == 200)
        }
    }

    @Test("a job that fails after putting through a cursor is rolled back; the others in its batch commit")
    func failedJobRollsBack() async throws {
        struct HalfDone: Error {}
        let environment = try Environment(path: directory.path)
        defer { environment.close() }
        let log: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "log")
        async let failed: Bool = {
            do {
                try await environment.writer.submit { txn in
                    // Past the other job's key, so an append in either order of the two.
                    try txn.withWriteCursor(log) { cursor in try cursor.put(BigEndianUInt64(3), [3], options: .append) }
                    throw HalfDone()
                }
                return false
            } catch is HalfDone {
                return true
            }
        }()
        async let kept: Void = environment.writer.submit { txn in
            try txn.withWriteCursor(log) { cursor in try cursor.put(BigEndianUInt64(2), [2], options: .append) }
        }
        #expect(try await failed)
        try await kept
        #expect(try environment.snapshot { try $0.get(log, BigEndianUInt64(3)) } == nil)
        #expect(try environment.snapshot { try $0.get(log, BigEndianUInt64(2)) } == [2])
    }
}
