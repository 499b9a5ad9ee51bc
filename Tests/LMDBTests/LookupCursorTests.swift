import HearthTesting
import LMDB
import Testing

@Suite("LMDB: lookups through a read transaction's kept cursor")
struct LookupCursorTests {
    let directory = TemporaryDirectory("lmdb-lookup")

    @Test("in any order, found or not, in two databases at once: what a plain lookup finds, and in a write too")
    func findsWhatAPlainLookupFinds() async throws {
        let environment = try Environment(path: directory.path)
        defer { environment.close() }
        let numbers: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "numbers")
        let squares: Database<BigEndianUInt64, [UInt8]> = try environment.openDatabase(named: "squares")
        // Even keys only, over many pages, so that lookups cross pages and miss between keys.
        try await environment.writer.submit { txn in
            for key in stride(from: UInt64(0), to: 20_000, by: 2) {
                try txn.put(numbers, BigEndianUInt64(key), Array("n\(key)".utf8))
                try txn.put(squares, BigEndianUInt64(key), Array("s\(key * key)".utf8))
            }
        }
        var order = Array(UInt64(0)..<20_010)
        let ascending = order
        order.shuffle()
        try environment.snapshot { txn throws in
            for keys in [ascending, order, Array(ascending.reversed())] {
                for key in keys {
                    let near = try txn.withValue(nearTheLast: numbers, forKey: BigEndianUInt64(key)) { $0.map { Array($0) } }
                    #expect(near == (key % 2 == 0 && key < 20_000 ? Array("n\(key)".utf8) : nil))
                    let other = try txn.withValue(nearTheLast: squares, forKey: BigEndianUInt64(key)) { $0.map { Array($0) } }
                    let plain = try txn.withValue(squares, forKey: BigEndianUInt64(key)) { $0.map { Array($0) } }
                    #expect(other == plain)
                }
            }
        }
        try await environment.writer.submit { txn in
            let found = try txn.withValue(nearTheLast: numbers, forKey: BigEndianUInt64(42)) { $0.map { Array($0) } }
            #expect(found == Array("n42".utf8))
        }
    }
}
