import HearthAuth
import HearthDomain
import HearthWire

/// `registeredApps.iosApps` and `registeredApps.androidApps` of the project config, in the
/// field names of Firebase's `IosApp` (`bundleId`, `teamId`, `appStoreId`) and `AndroidApp`
/// (`packageName`, `sha256Hashes`).
package enum RegisteredAppsJSON {
    package static let maxApps = 20
    package static let maxHashesPerApp = 10

    package static func render(_ app: IOSApp) -> JSONValue {
        var object: [String: JSONValue] = ["bundleId": .string(app.bundleId), "teamId": .string(app.teamId)]
        if let store = app.appStoreId { object["appStoreId"] = .string(store) }
        return .object(object)
    }

    package static func render(_ app: AndroidApp) -> JSONValue {
        ["packageName": .string(app.packageName), "sha256Hashes": .array(app.sha256Hashes.map(JSONValue.string))]
    }

    package static func iosApps(_ value: JSONValue?, _ path: String) throws -> [IOSApp] {
        try entries(value, path).map { entry in
            let bundle = try ProjectConfigJSON.appIds(entry["bundleId"].map { JSONValue.array([$0]) }, path + ".bundleId").first
            guard let bundleId = bundle else { throw ProjectConfigJSON.invalidValue(path, "a bundleId for each app") }
            // Apple's Team ID: ten characters of A-Z and 0-9.
            guard let teamId = entry["teamId"]?.stringValue, teamId.utf8.count == 10,
                teamId.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) })
            else { throw ProjectConfigJSON.invalidValue(path + ".teamId", "Apple's 10-character Team ID (A-Z, 0-9)") }
            var appStoreId: String?
            if let store = entry["appStoreId"], store != .null {
                guard let digits = store.stringValue, (1...20).contains(digits.utf8.count),
                    digits.utf8.allSatisfy({ (0x30...0x39).contains($0) })
                else { throw ProjectConfigJSON.invalidValue(path + ".appStoreId", "the App Store id's digits") }
                appStoreId = digits
            }
            return IOSApp(bundleId: bundleId, teamId: teamId, appStoreId: appStoreId)
        }
    }

    package static func androidApps(_ value: JSONValue?, _ path: String) throws -> [AndroidApp] {
        try entries(value, path).map { entry in
            let package = try ProjectConfigJSON.appIds(entry["packageName"].map { JSONValue.array([$0]) }, path + ".packageName").first
            guard let packageName = package else { throw ProjectConfigJSON.invalidValue(path, "a packageName for each app") }
            guard let hashes = entry["sha256Hashes"]?.arrayValue, (1...maxHashesPerApp).contains(hashes.count) else {
                throw ProjectConfigJSON.invalidValue(path + ".sha256Hashes", "1 to \(maxHashesPerApp) certificate fingerprints")
            }
            var normalized: [String] = []
            for hash in hashes {
                guard let fingerprint = hash.stringValue.flatMap(Self.fingerprint) else {
                    throw ProjectConfigJSON.invalidValue(path + ".sha256Hashes", "SHA-256 fingerprints (64 hex digits, colons optional)")
                }
                if !normalized.contains(fingerprint) { normalized.append(fingerprint) }
            }
            return AndroidApp(packageName: packageName, sha256Hashes: normalized)
        }
    }

    /// A SHA-256 certificate fingerprint as Digital Asset Links writes it (`14:6D:…`, upper
    /// case), from that form or 64 bare hex digits; `nil` for anything else.
    package static func fingerprint(_ text: String) -> String? {
        let hex = Array(text.utf8.filter { $0 != UInt8(ascii: ":") })
        let colons = text.utf8.count - hex.count
        guard hex.count == 64, colons == 0 || colons == 31,
            hex.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        if colons == 31 {
            // With colons, exactly one between each pair.
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 32, parts.allSatisfy({ $0.utf8.count == 2 }) else { return nil }
        }
        let upper = String(decoding: hex, as: UTF8.self).uppercased()
        return stride(from: 0, to: 64, by: 2).map { index -> String in
            let start = upper.index(upper.startIndex, offsetBy: index)
            return String(upper[start..<upper.index(start, offsetBy: 2)])
        }.joined(separator: ":")
    }

    private static func entries(_ value: JSONValue?, _ path: String) throws -> [[String: JSONValue]] {
        guard let value else { return [] }
        guard let items = value.arrayValue, items.count <= maxApps else {
            throw ProjectConfigJSON.invalidValue(path, "a list of at most \(maxApps) apps")
        }
        return try items.map { item in
            guard let object = item.objectValue else { throw ProjectConfigJSON.invalidValue(path, "app objects") }
            return object
        }
    }
}
