import ArgumentParser
import HearthDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func environmentValue(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
}

extension ProjectID: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

extension UserID: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

/// `--since`/`--until`/`--at`: RFC 3339 ("2026-11-22T10:00:00Z"), a date, or Unix milliseconds.
struct TimeArgument: ExpressibleByArgument {
    let milliseconds: Int64

    init?(argument: String) {
        guard let value = Timestamp.parse(argument) else { return nil }
        milliseconds = value
    }
}
