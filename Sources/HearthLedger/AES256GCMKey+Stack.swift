import HearthCrypto

extension AES256GCMKey {
    /// Opens into memory on the stack, hands the plaintext to `body` and wipes it: a sealed
    /// part is decoded where it lies, and no plaintext is left on the heap. Throws
    /// `AES256GCMError` when it does not open, or what `body` throws.
    func openOnStack<Result>(
        _ box: UnsafeRawBufferPointer, authenticating associatedData: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        guard box.count >= Self.overhead else { throw AES256GCMError.authenticationFailure }
        return try withUnsafeTemporaryAllocation(byteCount: box.count - Self.overhead, alignment: 16) { output in
            defer { output.initializeMemory(as: UInt8.self, repeating: 0) }
            let count = try open(box, authenticating: associatedData, into: output)
            return try body(UnsafeRawBufferPointer(rebasing: output[..<count]))
        }
    }
}
