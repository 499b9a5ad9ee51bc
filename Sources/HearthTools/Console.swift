#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered writes to stdout/stderr by file descriptor (the C `stdout`/`stderr` globals are
/// not concurrency-safe in Swift 6).
public final class Output: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    public static let standardOutput = Output(descriptor: 1)
    public static let standardError = Output(descriptor: 2)

    public init(descriptor: Int32) { self.descriptor = descriptor }

    public var isTerminal: Bool { isatty(descriptor) == 1 }

    public func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func line(_ text: String) { write(text + "\n") }

    public func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 {
                if errno == EINTR { continue }
                break
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// A progress bar on a terminal (stderr); nothing when stderr is not a terminal, so logs and
/// pipes get only the final summary.
public final class ProgressBar {
    private let output: Output
    private let label: String
    private let enabled: Bool
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var finished = false

    public init(label: String, output: Output = .standardError) {
        self.label = label
        self.output = output
        enabled = output.isTerminal
    }

    public func update(_ done: UInt64, of total: UInt64) {
        guard enabled, !finished else { return }
        let now = ContinuousClock.now
        guard now - lastDraw >= .milliseconds(100) || done == total else { return }
        lastDraw = now
        let fraction = total == 0 ? 1 : Double(done) / Double(total)
        let width = 30
        let filled = Int(fraction * Double(width))
        let rate = Double(done) / max(seconds(since: start), 0.001)
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        output.write(
            "\r\(label) [\(bar)] \(Int(fraction * 100))% \(formatCount(done))/\(formatCount(total)) \(formatCount(UInt64(rate)))/s ")
        output.flush()
    }

    /// Ends the bar's line; once (later calls do nothing).
    public func finish() {
        guard enabled, !finished else { return }
        finished = true
        output.write("\n")
        output.flush()
    }
}

public func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// 1234567 -> "1,234,567"
public func formatCount(_ value: UInt64) -> String {
    let digits = Array(String(value))
    var out: [Character] = []
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return String(out)
}
