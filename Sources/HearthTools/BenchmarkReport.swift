#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain-text table of benchmark rows, with the machine it ran on.
public enum BenchmarkReport {
    /// `allocator`: which malloc served the run (it moves the rebuild's rate).
    public static func table(_ rows: [LedgerBenchmark.Row], allocator: String) -> String {
        let nameWidth = rows.map(\.name.count).max() ?? 10
        var lines = ["machine: \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores, \(memoryGiB()) GiB RAM, \(allocator)", ""]
        lines.append(pad("workload", nameWidth) + "  " + pad("rate", 14) + "  unit        ratio")
        for row in rows {
            var line = pad(row.name, nameWidth) + "  " + pad(formatCount(UInt64(row.rate.rounded())), 14) + "  " + pad(row.unit, 10)
            if let ratio = row.ratio, let ceiling = row.ceiling {
                line += "  " + format1(ratio * 100) + "% of " + ceiling + (ratio >= 1 ? " (" + format1(ratio) + "x)" : "")
            }
            if let note = row.note { line += "  " + note }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    private static func memoryGiB() -> Int {
        (Int(sysconf(Int32(_SC_PHYS_PAGES))) * Int(sysconf(Int32(_SC_PAGESIZE)))) >> 30
    }
}
