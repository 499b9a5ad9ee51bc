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
}
