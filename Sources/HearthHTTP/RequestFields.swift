import Foundation
import HearthAuth
import HearthWire
import Hummingbird

/// A request body's fields with typed accessors. Snake_case keys are read as camelCase, as the
/// emulator normalizes them; a field of the wrong JSON type is a 400 naming the field.
struct RequestFields: Sendable {
    var values: [String: JSONValue]

    init(_ values: [String: JSONValue]) {
        var normalized: [String: JSONValue] = [:]
        for (key, value) in values { normalized[Self.camelCased(key)] = value }
        self.values = normalized
    }

    /// The body as JSON (or form fields when the request says so), bounded in size.
    static func read(_ request: Request, limit: Int = 1 << 20) async throws -> RequestFields {
        let buffer = try await request.body.collect(upTo: limit)
        let bytes = buffer.readableBytesView
        if request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw FirebaseError.invalidArgument("The body is not UTF-8.")
            }
            var fields: [String: JSONValue] = [:]
            for (name, value) in FormEncoding.fields(text) { fields[name] = .string(value) }
            return RequestFields(fields)
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 }) { return RequestFields([:]) }
        guard let value = JSONValue.parse(bytes) else {
            throw FirebaseError.invalidArgument("The body is not valid JSON.", reason: "parseError")
        }
        guard let object = value.objectValue else { throw FirebaseError.invalidArgument("The body must be a JSON object.") }
        return RequestFields(object)
    }

    func has(_ key: String) -> Bool {
        if case .null? = values[key] { return false }
        return values[key] != nil
    }

    /// A string; a number is accepted as its text (the Admin SDK sends some ids as numbers).
    func string(_ key: String) throws -> String? {
        switch values[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case .int(let value)?: return String(value)
        default: throw FirebaseError.invalidArgument("/\(key) must be string")
        }
    }

    func bool(_ key: String) throws -> Bool? {
        switch values[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case .string("true")?: return true
        case .string("false")?: return false
        default: throw FirebaseError.invalidArgument("/\(key) must be boolean")
        }
    }

    /// A string of at most `maxBytes` UTF-8 bytes (see `Validation.MaxBytes`).
    func string(_ key: String, maxBytes: Int) throws -> String? {
        try Validation.text(try string(key), key, maxBytes: maxBytes)
    }

    func int(_ key: String) throws -> Int64? {
        switch values[key] {
        case nil, .null?: return nil
        case .int(let value)?: return value
        case .double(let value)? where value.rounded() == value && abs(value) < 9e15: return Int64(value)
        case .string(let text)?:
            guard let value = Int64(text) else { throw FirebaseError.invalidArgument("/\(key) must be an integer") }
            return value
        default: throw FirebaseError.invalidArgument("/\(key) must be an integer")
        }
    }

    func strings(_ key: String) throws -> [String] {
        switch values[key] {
        case nil, .null?: return []
        case .string(let value)?: return [value]
        case .array(let items)?:
            return try items.map { item in
                guard let value = item.stringValue else { throw FirebaseError.invalidArgument("/\(key) must be array of strings") }
                return value
            }
        default: throw FirebaseError.invalidArgument("/\(key) must be array")
        }
    }

    func object(_ key: String) throws -> RequestFields? {
        switch values[key] {
        case nil, .null?: return nil
        case .object(let object)?: return RequestFields(object)
        default: throw FirebaseError.invalidArgument("/\(key) must be an object")
        }
    }

    func objects(_ key: String) throws -> [RequestFields] {
        switch values[key] {
        case nil, .null?: return []
        case .array(let items)?:
            return try items.map { item in
                guard let object = item.objectValue else { throw FirebaseError.invalidArgument("/\(key) must be array of objects") }
                return RequestFields(object)
            }
        default: throw FirebaseError.invalidArgument("/\(key) must be array")
        }
    }

    /// `refresh_token` -> `refreshToken`: underscores dropped, the ASCII letter after one (not
    /// at the start) upper-cased. Byte-level: the web SDK's form keys go through it on every refresh.
    static func camelCased(_ key: String) -> String {
        guard key.utf8.contains(UInt8(ascii: "_")) else { return key }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count)
        var upperNext = false
        for byte in key.utf8 {
            if byte == UInt8(ascii: "_") {
                upperNext = !bytes.isEmpty
                continue
            }
            bytes.append(upperNext && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte)
            upperNext = false
        }
        return bytes.isEmpty ? key : String(decoding: bytes, as: UTF8.self)
    }
}
