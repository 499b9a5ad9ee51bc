/// Overwrites key material with zeros before its array is released (an array's storage is
/// freed, not cleared).
public func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        base.initializeMemory(as: UInt8.self, repeating: 0, count: buffer.count)
    }
}
