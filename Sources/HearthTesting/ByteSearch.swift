/// Whether `haystack` holds `needle`'s UTF-8 bytes anywhere: what a test greps a raw data file,
/// a record or a backup for, to prove a value is not there.
public func bytes(_ haystack: some Collection<UInt8>, contain needle: String) -> Bool {
    let pattern = Array(needle.utf8)
    guard let first = pattern.first else { return true }
    let bytes = Array(haystack)
    guard bytes.count >= pattern.count else { return false }
    for index in 0...(bytes.count - pattern.count) where bytes[index] == first {
        if bytes[index..<index + pattern.count].elementsEqual(pattern) { return true }
    }
    return false
}
