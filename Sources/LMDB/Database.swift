import CLMDB

/// A named LMDB database whose keys and values have fixed Swift types (heed's `Database<KC, DC>`).
///
/// Handles are opened once, when the environment opens, and stay valid for its lifetime.
public struct Database<Key: ByteEncodable, Value>: Sendable {
    public let name: String
    let handle: MDB_dbi

    init(name: String, handle: MDB_dbi) {
        self.name = name
        self.handle = handle
    }

    /// The same database seen through other key and value types.
    public func remapped<K2: ByteEncodable, V2>(key: K2.Type = K2.self, value: V2.Type = V2.self) -> Database<K2, V2> {
        Database<K2, V2>(name: name, handle: handle)
    }
}

/// A database seen as raw bytes; digests and tools walk every database this way.
public typealias RawDatabase = Database<[UInt8], [UInt8]>
