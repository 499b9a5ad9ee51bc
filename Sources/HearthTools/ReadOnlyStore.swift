import HearthStore

extension DataDirectory {
    /// Opens the directory for reading, runs `body` and closes it: what every reading command
    /// does. Safe beside a running daemon (no lock, no writer, no catching up).
    public func reading<Result>(_ body: (AccountStore) throws -> Result) throws -> Result {
        let store = try openForReading()
        defer { store.close() }
        return try body(store)
    }
}
