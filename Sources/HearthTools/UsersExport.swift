import Foundation
import HearthAuth
import HearthDomain
import HearthStore
import HearthWire

/// `hearth users export`: a project's accounts as the JSON `firebase auth:export` writes
/// (`{"users": [...]}`, the same keys in the same order, hashes and salts in standard base64,
/// times as strings of Unix milliseconds), streamed from one read snapshot beside a running
/// daemon. Hearth adds the hash parameters at the top, so `hearth users import` (and
/// `firebase auth:import`, given them as flags) can check every password: `hashConfig` for
/// most users, and `otherHashConfigs` for accounts whose hashes were made otherwise (imported
/// ones not yet re-hashed by a sign-in).
public enum UsersExport {
    public struct Summary: Sendable {
        public var users = 0
        public var withPassword = 0
        /// Password users whose hash no import could check (never expected; reported).
        public var hashesLeftOut = 0
        /// Users with second factors (`mfaInfo`), and the TOTP secrets written with them.
        public var withSecondFactors = 0
        public var totpSecrets = 0
        public var seconds = 0.0
    }

    static let pageSize = 1000

    /// `totpSecrets`: opens TOTP factors' secrets into the file (`totpInfo.sharedSecretKey`), so
    /// that a Hearth importing it keeps them working; without it they are listed and an import
    /// records them as needing re-enrolment.
    public static func write(
        _ store: AccountStore, project: ProjectID, to path: String, totpSecrets: Bool = false,
        progress: (UInt64, UInt64) -> Void = { _, _ in }
    ) throws -> Summary {
        let totpSecrets = totpSecrets ? SecretSealer(keyFile: store.directory.secretsKeyFile) : nil
        let start = ContinuousClock.now
        var summary = Summary()
        // Owner-only, under a temporary name until whole (`ExportTarget`): it holds password hashes.
        try ExportTarget.write(to: path) { write in
            try store.read { reader in
                let total = UInt64(try reader.accountCount(in: project))
                // First pass: which hash configuration most accounts share, and who differs.
                var counts: [HashConfig: Int] = [:]
                try forEachAccount(reader, project) { account in
                    if let config = account.password.flatMap(HashConfig.init(stored:)) { counts[config, default: 0] += 1 }
                }
                let main = counts.max { $0.value < $1.value || ($0.value == $1.value && "\($0.key)" > "\($1.key)") }?.key
                var others: [HashConfig: [String]] = [:]
                if counts.count > 1 {
                    try forEachAccount(reader, project) { account in
                        if let config = account.password.flatMap(HashConfig.init(stored:)), config != main {
                            others[config, default: []].append(account.uid.rawValue)
                        }
                    }
                }
                try write("{")
                if let main { try write("\"hashConfig\":" + main.json.text + ",\n") }
                if !others.isEmpty {
                    let groups = others.sorted { $0.value[0] < $1.value[0] }.map { config, uids -> JSONValue in
                        ["hashConfig": config.json, "localIds": .array(uids.map(JSONValue.string))]
                    }
                    try write("\"otherHashConfigs\":" + JSONValue.array(groups).text + ",\n")
                }
                try write("\"users\": [\n")
                try forEachAccount(reader, project) { account in
                    if summary.users > 0 { try write(",\n") }
                    try write(try userJSON(account, summary: &summary, totpSecrets: totpSecrets))
                    summary.users += 1
                    if summary.users % pageSize == 0 { progress(UInt64(summary.users), total) }
                }
                try write("\n]}\n")
                progress(UInt64(summary.users), max(total, UInt64(summary.users)))
            }
        }
        summary.seconds = seconds(since: start)
        return summary
    }

    /// One person's data, for a subject-access request: their account as `write` exports it
    /// (`null` once it is gone), every event of their account's stream, and every event of the
    /// action codes issued for them (`actionCodes`: the addresses they were sent to), as `hearth
    /// audit replay` prints events, personal data opened (or named as erased). Owner-only: it
    /// holds it all. Finding the codes reads the ledger once (`progress`). Returns the number of
    /// events.
    public static func writeHistory(
        _ store: AccountStore, project: ProjectID, uid: UserID, to path: String,
        progress: (_ scanned: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) throws -> Int {
        let account = try store.read { try $0.account(uid, in: project) }
        let events = try store.audit.events(of: .account(project, uid))
        guard account != nil || !events.isEmpty else { throw HistoryError.unknownAccount(uid) }
        let codes = try store.audit.codeStreams(issuedFor: uid, in: project, progress: progress).flatMap { try store.audit.events(of: $0) }
        var ignored = Summary()
        try ExportTarget.write(to: path) { write in
            try write("{\"localId\":" + JSONValue.string(uid.rawValue).text + ",\n")
            try write("\"user\":" + (try account.map { try userJSON($0, summary: &ignored) } ?? "null") + ",\n")
            try write("\"events\":[\n")
            for (index, event) in events.enumerated() { try write((index > 0 ? ",\n" : "") + (try event.jsonLine())) }
            try write("\n],\n\"actionCodes\":[\n")
            for (index, event) in codes.enumerated() { try write((index > 0 ? ",\n" : "") + (try event.jsonLine())) }
            try write("\n]}\n")
        }
        return events.count + codes.count
    }

    public enum HistoryError: Error, CustomStringConvertible {
        case unknownAccount(UserID)

        public var description: String {
            switch self {
            case .unknownAccount(let uid): "no account \(uid) ever existed in this project"
            }
        }
    }

    private static func forEachAccount(_ reader: StoreReader, _ project: ProjectID, _ body: (Account) throws -> Void) throws {
        var after: UserID?
        while true {
            let page = try reader.accounts(in: project, after: after, limit: pageSize)
            for account in page { try body(account) }
            guard page.count == pageSize, let last = page.last else { return }
            after = last.uid
        }
    }

    /// One user, with `firebase auth:export`'s keys in its order.
    static func userJSON(_ account: Account, summary: inout Summary, totpSecrets: SecretSealer? = nil) throws -> String {
        var fields: [(String, JSONValue)] = [("localId", .string(account.uid.rawValue))]
        if let email = account.email { fields.append(("email", .string(email))) }
        fields.append(("emailVerified", .bool(account.emailVerified)))
        if let password = account.password {
            summary.withPassword += 1
            if HashConfig(stored: password) != nil {
                fields.append(("passwordHash", .string(Data(password.hash).base64EncodedString())))
                fields.append(("salt", .string(Data(password.salt).base64EncodedString())))
            } else {
                summary.hashesLeftOut += 1
            }
        }
        if let name = account.displayName { fields.append(("displayName", .string(name))) }
        if let photo = account.photoUrl { fields.append(("photoUrl", .string(photo))) }
        if let last = account.lastSignInAt { fields.append(("lastSignedInAt", .string(String(last)))) }
        fields.append(("createdAt", .string(String(account.createdAt))))
        if let phone = account.phoneNumber { fields.append(("phoneNumber", .string(phone))) }
        fields.append(("disabled", .bool(account.disabled)))
        if let claims = account.customClaims { fields.append(("customAttributes", .string(claims))) }
        let providers = account.providers.filter(\.providerId.isFederated).map { link -> String in
            var entry: [(String, JSONValue)] = [("providerId", .string(link.providerId.rawValue)), ("rawId", .string(link.federatedId))]
            if let email = link.email { entry.append(("email", .string(email))) }
            if let name = link.displayName { entry.append(("displayName", .string(name))) }
            if let photo = link.photoUrl { entry.append(("photoUrl", .string(photo))) }
            return ordered(entry)
        }
        var user = String(ordered(fields).dropLast()) + ",\"providerUserInfo\":[" + providers.joined(separator: ",") + "]"
        if !account.secondFactors.isEmpty {
            summary.withSecondFactors += 1
            let factors = try account.secondFactors.map { try secondFactorJSON($0, summary: &summary, totpSecrets: totpSecrets) }
            user += ",\"mfaInfo\":[" + factors.joined(separator: ",") + "]"
        }
        return user + "}"
    }

    /// An `mfaInfo` entry as the Admin SDKs import it; a TOTP factor's secret only when asked.
    private static func secondFactorJSON(_ factor: SecondFactor, summary: inout Summary, totpSecrets: SecretSealer?) throws
        -> String
    {
        var entry: [(String, JSONValue)] = [("mfaEnrollmentId", .string(factor.enrollmentId))]
        if let name = factor.displayName { entry.append(("displayName", .string(name))) }
        entry.append(("enrolledAt", .string(Timestamp.iso8601(milliseconds: factor.enrolledAt))))
        switch factor.kind {
        case .phone:
            entry.append(("phoneInfo", .string(factor.phoneNumber ?? "")))
        case .totp:
            var totp: [String: JSONValue] = [:]
            if let totpSecrets, factor.isUsable, let secret = try totpSecrets.open(factor.sealedSecret, for: .totpSecret) {
                totp["sharedSecretKey"] = .string(Base32.encode(secret))
                totp["lastUsedStep"] = .int(factor.lastUsedStep)
                summary.totpSecrets += 1
            }
            entry.append(("totpInfo", .object(totp)))
        }
        return ordered(entry)
    }

    /// A JSON object with its keys in the given order (JSONValue's objects have none).
    private static func ordered(_ fields: [(String, JSONValue)]) -> String {
        "{" + fields.map { JSONValue.string($0.0).text + ":" + $0.1.text }.joined(separator: ",") + "}"
    }
}
