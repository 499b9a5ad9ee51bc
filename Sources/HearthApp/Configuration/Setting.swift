import Foundation
import HearthWire

/// One setting of `hearth serve`: its key in the JSON file, its environment variable, the
/// section it belongs to, how a value is read, its default and what it does. `SettingsTable`
/// lists them all; the loader and the generated settings reference both read that list, so
/// adding a setting is one row there and one field in its section.
public struct Setting: Sendable {
    public enum Section: String, Sendable, CaseIterable {
        case server, listen, limits, passwords, secrets, projects, providers, mail, cleanup, observability, cluster
    }

    /// How a value is written, in the file and in the environment.
    public enum Kind: String, Sendable {
        /// A string (a number in the file is taken as its digits).
        case text
        case integer
        /// `true`/`false` (`1`/`0`, `yes`/`no` in the environment).
        case flag
        /// A JSON array of strings in the file; comma-separated in the environment.
        case list
        /// Any JSON in the file, and in the environment (a bare word there is a string).
        case json

        /// As the reference names it.
        public var described: String {
            switch self {
            case .text: "text"
            case .integer: "integer"
            case .flag: "`true` / `false`"
            case .list: "list (comma-separated in the environment)"
            case .json: "JSON"
            }
        }
    }

    public let key: String
    public let section: Section
    public let kind: Kind
    /// The default as the reference shows it.
    public let defaultValue: String
    public let summary: String
    let read: @Sendable (inout ServerSettings, _ value: JSONValue, _ source: String) throws -> Void

    /// `HEARTH_` and the key in capitals, words split at each capital (`smtpHost` → `HEARTH_SMTP_HOST`).
    public var environmentName: String {
        if key == "dataDirectory" { return "HEARTH_DATA_DIR" }
        return "HEARTH_"
            + key.reduce(into: "") { name, character in
                if character.isUppercase { name += "_" }
                name += character.uppercased()
            }
    }

    /// The value an environment variable's text stands for.
    func value(fromEnvironment text: String) -> JSONValue {
        switch kind {
        case .json: JSONValue.parse(Array(text.utf8)) ?? .string(text)
        case .list: .array(text.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) })
        case .text, .integer, .flag: .string(text)
        }
    }
}

// Rows for the common shapes: a key path into the settings and the reading that suits its type.
extension Setting {
    typealias Field<Value> = any WritableKeyPath<ServerSettings, Value> & Sendable

    /// A row whose value `read` takes out of the file's or the environment's, into `field`.
    private static func row<Value>(
        _ key: String, _ section: Section, _ kind: Kind, _ field: Field<Value>, _ defaultValue: String, _ summary: String,
        _ read: @escaping @Sendable (SettingValue) throws -> Value
    ) -> Setting {
        Setting(key: key, section: section, kind: kind, defaultValue: defaultValue, summary: summary) { settings, value, source in
            settings[keyPath: field] = try read(SettingValue(key, value, source))
        }
    }

    static func text(_ key: String, _ section: Section, _ field: Field<String>, default value: String, _ summary: String) -> Setting {
        row(key, section, .text, field, value, summary) { try $0.text() }
    }

    static func text(_ key: String, _ section: Section, _ field: Field<String?>, default value: String, _ summary: String) -> Setting {
        row(key, section, .text, field, value, summary) { try $0.text() }
    }

    static func integer(_ key: String, _ section: Section, _ field: Field<Int>, default value: String, _ summary: String) -> Setting {
        row(key, section, .integer, field, value, summary) { try $0.integer() }
    }

    static func integer(_ key: String, _ section: Section, _ field: Field<Int?>, default value: String, _ summary: String) -> Setting {
        row(key, section, .integer, field, value, summary) { try $0.integer() }
    }

    static func flag(_ key: String, _ section: Section, _ field: Field<Bool>, default value: String = "`false`", _ summary: String)
        -> Setting
    {
        row(key, section, .flag, field, value, summary) { try $0.flag() }
    }

    static func list(_ key: String, _ section: Section, _ field: Field<[String]>, default value: String = "none", _ summary: String)
        -> Setting
    {
        row(key, section, .list, field, value, summary) { try $0.strings() }
    }

    static func object(
        _ key: String, _ section: Section, _ field: Field<[String: JSONValue]>, default value: String = "none", _ summary: String
    ) -> Setting {
        row(key, section, .json, field, value, summary) { try $0.object() }
    }

    /// JSON kept as it came, for a section's validation to read (it takes more than one shape).
    static func json(_ key: String, _ section: Section, _ field: Field<JSONValue?>, default value: String, _ summary: String)
        -> Setting
    {
        row(key, section, .json, field, value, summary) { $0.value }
    }

    /// A value of a `RawRepresentable` type (a profile, an algorithm), compared as `normalized` makes it.
    static func choice<Value: RawRepresentable<String> & SendableMetatype>(
        _ key: String, _ section: Section, _ field: Field<Value>, default defaultValue: String,
        normalized: @escaping @Sendable (String) -> String = { $0 }, _ summary: String
    ) -> Setting {
        Setting(key: key, section: section, kind: .text, defaultValue: defaultValue, summary: summary) { settings, value, source in
            let setting = SettingValue(key, value, source)
            guard let choice = Value(rawValue: normalized(try setting.text())) else { throw setting.invalid }
            settings[keyPath: field] = choice
        }
    }
}

/// One value as the file or the environment gave it, read as the setting's type wants it.
struct SettingValue {
    let key: String
    let value: JSONValue
    let source: String

    init(_ key: String, _ value: JSONValue, _ source: String) {
        self.key = key
        self.value = value
        self.source = source
    }

    var invalid: ConfigurationError { .invalid(key, source: source) }

    func text() throws -> String {
        switch value {
        case .string(let text): return text
        case .int(let number): return String(number)
        default: throw invalid
        }
    }

    func integer() throws -> Int {
        guard let number = Int(try text()) else { throw invalid }
        return number
    }

    func flag() throws -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .string(let text) where ["true", "1", "yes"].contains(text.lowercased()): return true
        case .string(let text) where ["false", "0", "no"].contains(text.lowercased()): return false
        default: throw invalid
        }
    }

    func strings() throws -> [String] {
        guard let items = value.arrayValue?.compactMap(\.stringValue) else { throw invalid }
        return items
    }

    func object() throws -> [String: JSONValue] {
        guard let object = value.objectValue else { throw invalid }
        return object
    }
}
