/// What a writer expects of a stream's version before appending to it (optimistic concurrency).
public enum ExpectedVersion: Equatable, Sendable, CustomStringConvertible {
    case any
    case noStream
    case exactly(UInt64)

    public func allows(_ version: UInt64) -> Bool {
        switch self {
        case .any: true
        case .noStream: version == 0
        case .exactly(let expected): version == expected
        }
    }

    public var description: String {
        switch self {
        case .any: "any"
        case .noStream: "no stream"
        case .exactly(let version): "\(version)"
        }
    }
}
