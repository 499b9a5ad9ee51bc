import Foundation
import HearthWire
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `HEARTH_LOG_FORMAT=json`: one JSON object per line on stderr, for log shippers: `time`
/// (ISO 8601, UTC), `level`, `label`, `message`, then the metadata's fields as strings.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [String: JSONValue] = [:]
        for (key, value) in self.fields(of: event) { fields[key] = .string("\(value)") }
        fields["time"] = .string(
            Date.now.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)))
        fields["level"] = .string(event.level.rawValue)
        fields["label"] = .string(label)
        fields["message"] = .string(event.message.description)
        let line = JSONValue.object(fields).encoded() + [UInt8(ascii: "\n")]
        // One write per line: lines from several threads never interleave.
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
