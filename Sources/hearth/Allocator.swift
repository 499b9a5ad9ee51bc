#if canImport(CJemalloc)
import CJemalloc
#endif

/// On Linux the `hearth` executable links jemalloc, which then serves every allocation in the
/// process, Swift's included: a rebuild frees chunks of events and accounts on other threads
/// than the ones that made them, and with glibc's malloc it ran 15–20% slower. Its options
/// are in `JemallocOptions/MallocConf.c`.
enum Allocator {
    /// "jemalloc 5.3.0, dirty_decay_ms 1000" if jemalloc serves this thread's allocations (with
    /// the option that matters most here), else "system malloc".
    static var description: String {
        #if canImport(CJemalloc)
        guard let version = read("version", as: UnsafePointer<CChar>?.self) ?? nil else { return "system malloc" }
        // An allocation counts in jemalloc's per-thread total only if jemalloc is the malloc in
        // use, not merely linked.
        let before = read("thread.allocated", as: UInt64.self) ?? 0
        UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16).deallocate()
        let after = read("thread.allocated", as: UInt64.self) ?? 0
        // "5.3.0-0-g54eaed1d…": the release, then how far past it and which commit.
        let release = String(cString: version).prefix { $0 != "-" }
        guard after > before else { return "system malloc" }
        let decay = read("opt.dirty_decay_ms", as: Int.self).map { ", dirty_decay_ms \($0)" } ?? ""
        return "jemalloc " + release + decay
        #else
        return "system malloc"
        #endif
    }

    #if canImport(CJemalloc)
    private static func read<Value: BitwiseCopyable>(_ name: String, as: Value.Type) -> Value? {
        let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        defer { value.deallocate() }
        var size = MemoryLayout<Value>.size
        guard mallctl(name, value, &size, nil, 0) == 0, size == MemoryLayout<Value>.size else { return nil }
        return value.pointee
    }
    #endif
}
