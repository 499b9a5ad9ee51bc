import HearthWire

/// `hearth project set`'s `path=value` arguments as a v2 config update: the body and its
/// `updateMask`. `true`/`false` are booleans, list fields (`authorizedDomains`, the registered
/// apps, `additionalClientIds`) comma-separated lists, an
/// empty value clears the field; the daemon checks everything else, as for any API caller.
public enum ProjectAssignments {
    public struct Invalid: Error, CustomStringConvertible {
        public let argument: String
        public var description: String { "expected path=value (e.g. autodeleteAnonymousUsers=true), got '\(argument)'" }
    }

    public static func update(_ assignments: [String]) throws -> (body: JSONValue, updateMask: String) {
        var body: [String: JSONValue] = [:]
        var mask: [String] = []
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[0].split(separator: ".").contains(where: \.isEmpty) else {
                throw Invalid(argument: assignment)
            }
            let path = String(parts[0])
            mask.append(path)
            if let value = value(of: String(parts[1]), at: path) { insert(value, at: path.split(separator: ".")[...], into: &body) }
        }
        return (.object(body), mask.joined(separator: ","))
    }

    static let listFields: Set<String> = [
        "authorizedDomains", "linkDomains", "registeredApps.iosBundleIds", "registeredApps.androidPackages", "additionalClientIds",
    ]

    /// `nil` (absent from the body) clears the field: the mask names it, so it takes its default.
    static func value(of text: String, at path: String) -> JSONValue? {
        if text.isEmpty { return nil }
        if listFields.contains(path) {
            return .array(text.split(separator: ",").map { .string(String($0)) })
        }
        switch text {
        case "true": return true
        case "false": return false
        default: return .string(text)
        }
    }

    private static func insert(_ value: JSONValue, at path: ArraySlice<Substring>, into object: inout [String: JSONValue]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            object[String(first)] = value
            return
        }
        var inner = object[String(first)]?.objectValue ?? [:]
        insert(value, at: path.dropFirst(), into: &inner)
        object[String(first)] = .object(inner)
    }
}
