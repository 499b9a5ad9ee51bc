import LMDB

extension Environment {
    /// `read` wrapped in a synchronous function, for async tests: the transaction still
    /// opens and closes without an `await` in between.
    public func snapshot<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try read(body)
    }
}
