import HearthCrypto
import HearthDomain
import LMDB

// The key table as Hearth wrote it before keys were appended by first sequence: keyed by the
// stream's name, `varint generation | wrapped key`, or only the generation once destroyed, and
// only the latest generation kept. `package`: for tests, which need such a table to prove that
// it still reads and that a writer moves it (`StreamKeys.moveLegacyEntries`).

extension StreamKeys {
    /// Rewrites every entry in the layout keyed by name; returns how many streams it wrote.
    package func moveToNameKeyedLayout(in txn: WriteTransaction) throws -> Int {
        var latest: [StreamID: (generation: UInt64, wrapped: [UInt8])] = [:]
        var entries: [[UInt8]] = []
        var cipher: AES256GCMKey?
        try txn.forEach(table) { key, value in
            guard Self.isEntryKey(key) else { return .continue }
            var reader = ByteReader(key)
            let first = try reader.readBigEndianUInt64()
            let generation = try reader.readBigEndianUInt64()
            let owner = try txn.withValue(events, forKey: BigEndianUInt64(first)) { record in try RecordFormat.place(of: record!).stream }
            if generation >= latest[owner]?.generation ?? 0 {
                // Bound to the stream's name, as that layout bound them.
                let wrapped =
                    value.isEmpty
                    ? []
                    : try rewrap(
                        Array(value), from: .entry(first: first, generation: generation), to: .named(owner, generation: generation),
                        of: owner,
                        with: try ledgerCipher(&cipher))
                latest[owner] = (generation, wrapped)
            }
            entries.append(Array(key))
            return .continue
        }
        for key in entries { _ = try txn.delete(table, key) }
        for (owner, entry) in latest {
            var value = ByteWriter(capacity: 80)
            value.write(varint: entry.generation)
            value.write(raw: entry.wrapped)
            try txn.put(table, Self.legacyKey(owner), value.bytes)
        }
        return latest.count
    }
}
