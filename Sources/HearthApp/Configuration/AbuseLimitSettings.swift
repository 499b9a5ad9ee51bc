import HearthAuth
import HearthDomain
import HearthWire

/// The `limits` setting: `false` (none), or an object with any of `AbuseLimits`' fields,
/// `hashQueuePerAddress`, `enabled`, and `projects` (project id -> fields of its own). Unset:
/// the defaults in production, none in development (as in the Auth Emulator).
enum AbuseLimitSettings {
    static func policy(_ limits: JSONValue?, profile: Profile) throws -> AbuseLimitPolicy? {
        guard let limits else { return profile == .production ? AbuseLimitPolicy() : nil }
        if limits == .bool(false) { return nil }
        guard var object = limits.objectValue else { throw ConfigurationError.invalid("limits", source: "not an object or false") }
        if let enabled = object.removeValue(forKey: "enabled") {
            guard case .bool(let on) = enabled else { throw ConfigurationError.invalid("limits.enabled", source: enabled.text) }
            if !on { return nil }
        }
        var policy = AbuseLimitPolicy()
        if let queue = object.removeValue(forKey: "hashQueuePerAddress") {
            guard case .int(let count) = queue, (1...4096).contains(count) else {
                throw ConfigurationError.invalid("limits.hashQueuePerAddress (1 to 4096)", source: queue.text)
            }
            policy.hashQueuePerAddress = Int(count)
        }
        let projects = object.removeValue(forKey: "projects")
        policy.defaults = try Self.limits(object, over: AbuseLimits(), path: "limits")
        for (id, fields) in projects?.objectValue ?? [:] {
            guard let project = ProjectID(id), let fields = fields.objectValue else {
                throw ConfigurationError.invalid("limits.projects", source: id)
            }
            policy.projects[project] = try Self.limits(fields, over: policy.defaults, path: "limits.projects.\(id)")
        }
        return policy
    }

    private static func limits(_ object: [String: JSONValue], over base: AbuseLimits, path: String) throws -> AbuseLimits {
        var limits = base
        for (name, value) in object {
            guard let field = AbuseLimits.fields.first(where: { $0.name == name }) else {
                throw ConfigurationError.invalid("\(path): unknown limit \(name)", source: value.text)
            }
            guard case .int(let number) = value, field.range.contains(Int(number)) else {
                throw ConfigurationError.invalid(
                    "\(path).\(name) (\(field.range.lowerBound) to \(field.range.upperBound))", source: value.text)
            }
            limits[keyPath: field.keyPath] = Int(number)
        }
        return limits
    }
}
