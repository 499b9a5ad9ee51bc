import Foundation
import HearthTesting
import LMDB
import Synchronization
import Testing

@Suite("LMDB map growth and readers")
struct MapGrowthTests {
    let directory = TemporaryDirectory("lmdb-map")

    @Test func mapFullGrowsTheMapAndRetriesTheBatch() async throws {
        var options = EnvironmentOptions()
        options.mapSize = 1 << 20
        let environment = try Environment(path: directory.path, options: options)
        defer { environment.close() }
        let database: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "big")
        let value = [UInt8](repeating: 7, count: 4000)
        // ~16 MiB into a 1 MiB map, from concurrent submitters so batches hit MAP_FULL mid-way.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        try await environment.writer.submit { txn in
                            try txn.put(database, BigEndianUInt64(UInt64(task * 1000 + index)), value)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(environment.writer.statistics.mapGrowths >= 4)
        #expect(environment.info.mapSize >= 16 << 20)
        try environment.snapshot { txn throws in
            #expect(try txn.count(database) == 4000)
            #expect(try txn.get(database, BigEndianUInt64(7499)) == value)
        }
    }

    @Test("a read of a closed environment throws, never touches the freed handle; reads in flight finish first")
    func readsAfterCloseThrow() throws {
        let environment = try Environment(path: directory.path, options: EnvironmentOptions())
        let database: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "closing")
        try environment.writer.perform { txn in try txn.put(database, BigEndianUInt64(1), [1]) }
        environment.close()
        #expect(throws: LMDBError.closed) { try environment.snapshot { txn throws in _ = try txn.get(database, BigEndianUInt64(1)) } }
        #expect(throws: LMDBError.closed) { try environment.readerCheck() }
    }

    @Test func mapFullAtTheLimitFailsTheBatchCleanly() throws {
        var options = EnvironmentOptions()
        options.mapSize = 1 << 20
        options.maxMapSize = 2 << 20
        let environment = try Environment(path: directory.path, options: options)
        defer { environment.close() }
        let database: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "big")
        let value = [UInt8](repeating: 1, count: 4000)
        #expect(throws: LMDBError.mapFull) {
            try environment.writer.perform { txn in
                for index in 0..<2000 { try txn.put(database, BigEndianUInt64(UInt64(index)), value) }
            }
        }
        // The environment is still usable and the failed batch left nothing behind.
        try environment.writer.perform { txn in try txn.put(database, BigEndianUInt64(1), [1]) }
        #expect(try environment.snapshot { try $0.count(database) } == 1)
    }

    @Test func readersOnOtherThreadsSeeConsistentSnapshotsWhileTheMapGrows() async throws {
        var options = EnvironmentOptions()
        options.mapSize = 1 << 20
        let environment = try Environment(path: directory.path, options: options)
        defer { environment.close() }
        let database: Database<String, BigEndianUInt64> = try environment.openDatabase(named: "pair")
        let blobs: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "blobs")
        final class Flags: Sendable {
            let stop = Atomic<Bool>(false)
            let reads = Atomic<Int>(0)
            let torn = Atomic<Int>(0)
        }
        let flags = Flags()
        let finished = DispatchGroup()
        // Reader threads check an invariant the writer keeps in every transaction: a == b.
        for _ in 0..<4 {
            finished.enter()
            Thread {
                while !flags.stop.load(ordering: .relaxed) {
                    let consistent =
                        (try? environment.snapshot { txn throws in
                            try txn.get(database, "a")?.value == txn.get(database, "b")?.value
                        }) ?? false
                    if !consistent { flags.torn.add(1, ordering: .relaxed) }
                    flags.reads.add(1, ordering: .relaxed)
                }
                finished.leave()
            }.start()
        }
        let blob = [UInt8](repeating: 3, count: 8000)
        for step in 1...600 {
            try await environment.writer.submit { txn in
                try txn.put(database, "a", BigEndianUInt64(UInt64(step)))
                try txn.put(blobs, BigEndianUInt64(UInt64(step)), blob)
                try txn.put(database, "b", BigEndianUInt64(UInt64(step)))
            }
        }
        flags.stop.store(true, ordering: .relaxed)
        await withCheckedContinuation { done in finished.notify(queue: .global()) { done.resume() } }
        #expect(flags.torn.load(ordering: .relaxed) == 0)
        #expect(flags.reads.load(ordering: .relaxed) > 0)
        #expect(environment.writer.statistics.mapGrowths >= 2)
        #expect(try environment.snapshot { try $0.get(database, "b")?.value } == 600)
    }

    @Test func cursorsSeekAndKeysSortBigEndian() throws {
        let environment = try Environment(path: directory.path)
        defer { environment.close() }
        let database: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "order")
        try environment.writer.perform { txn in
            for key: UInt64 in [300, 2, 70_000, 1 << 40] { try txn.put(database, BigEndianUInt64(key), []) }
        }
        try environment.snapshot { txn throws in
            var keys: [UInt64] = []
            try txn.forEach(database) { key, _ in
                keys.append(try BigEndianUInt64(decoding: key).value)
                return .continue
            }
            #expect(keys == [2, 300, 70_000, 1 << 40])
            try txn.withCursor(database) { cursor in
                let atMost = try cursor.seek(atMost: BigEndianUInt64(69_999))
                #expect(try atMost.map { try BigEndianUInt64(decoding: $0.key).value } == 300)
                let atLeast = try cursor.seek(atLeast: BigEndianUInt64(301))
                #expect(try atLeast.map { try BigEndianUInt64(decoding: $0.key).value } == 70_000)
                #expect(try cursor.seek(atMost: BigEndianUInt64(1)) == nil)
            }
        }
    }

    @Test func aReadOnlyEnvironmentReadsBesideAWriter() throws {
        let writerEnvironment = try Environment(path: directory.path)
        let database: Database<String, [UInt8]> = try writerEnvironment.openDatabase(named: "shared")
        try writerEnvironment.writer.perform { txn in try txn.put(database, "k", [1, 2, 3]) }
        writerEnvironment.close()
        var options = EnvironmentOptions()
        options.readOnly = true
        let reader = try Environment(path: directory.path, options: options)
        defer { reader.close() }
        let readOnlyDatabase: Database<String, [UInt8]> = try reader.openDatabase(named: "shared")
        #expect(try reader.read { try $0.get(readOnlyDatabase, "k") } == [1, 2, 3])
        #expect(throws: LMDBError.notFound) { let _: Database<String, [UInt8]> = try reader.openDatabase(named: "missing") }
    }
}
