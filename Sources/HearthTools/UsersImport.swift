import Dispatch
import HearthDomain
import HearthStore
import HearthWire
import Synchronization

/// `hearth users import`: a `firebase auth:export` file (or Hearth's own) into a project,
/// through the running daemon's `accounts:batchCreate` (so through its one writer, in
/// batches of up to 1,000 users, a few in flight). Like `firebase auth:import`, every user is
/// checked first and nothing is sent if one is malformed; a user the daemon refuses (a taken
/// email, an existing uid) is reported and the rest go on.
public enum UsersImport {
    /// The keys `firebase auth:import` accepts in a user.
    static let userKeys: Set<String> = [
        "localId", "email", "emailVerified", "passwordHash", "salt", "displayName", "photoUrl", "createdAt",
        "lastSignedInAt", "providerUserInfo", "phoneNumber", "disabled", "customAttributes", "mfaInfo",
    ]
    static let providerKeys: Set<String> = ["providerId", "rawId", "email", "displayName", "photoUrl"]

    public struct Options: Sendable {
        public var project: ProjectID
        /// From the flags; otherwise the file's `hashConfig`.
        public var hashConfig: HashConfig?
        public var batchSize = 1000
        /// Users' JSON per request, under the daemon's 1 MiB limit on a request body.
        public var maxBatchBytes = 900 << 10
        /// Batches in flight at once: the daemon's writer commits them together.
        public var concurrency = 4

        public init(project: ProjectID, hashConfig: HashConfig? = nil) {
            self.project = project
            self.hashConfig = hashConfig
        }
    }

    public struct Refused: Sendable, Equatable {
        public var localId: String
        public var message: String
    }

    public struct Summary: Sendable {
        public var users = 0
        public var imported = 0
        public var refused: [Refused] = []
        public var batches = 0
        /// Users imported with second factors (`mfaInfo`), all kept.
        public var secondFactorUsers = 0
        /// Of those, users none of whose factors Hearth can check (SMS, or TOTP without its
        /// secret): refused at sign-in until an administrator resets their factors.
        public var reenrolmentUsers = 0
        public var seconds = 0.0
        public var usersPerSecond: Double { Double(users) / max(seconds, 1e-9) }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// What the first pass found: how many users, and how their passwords were hashed.
    struct Plan {
        var users = 0
        var hashConfig: HashConfig?
        var otherHashConfigs: [String: HashConfig] = [:]
        var passwordUsers = 0
        var secondFactorUsers = 0
        var reenrolmentUsers = 0
    }

    /// `checking(bytesRead, fileBytes)` during the first pass, `progress(imported, users)` during the second.
    public static func run(
        file: String, options: Options, daemon: DaemonClient, checking: (UInt64, UInt64) -> Void = { _, _ in },
        progress: (UInt64, UInt64) -> Void = { _, _ in }
    ) throws -> Summary {
        let start = ContinuousClock.now
        var plan = try check(file, progress: checking)
        if let flags = options.hashConfig { plan.hashConfig = flags }
        if plan.passwordUsers > 0 {
            guard let config = plan.hashConfig else {
                throw Invalid(
                    description:
                        "the file has password hashes but says not how they were made: pass --hash-algo and its parameters, as to firebase auth:import"
                )
            }
            try config.validate()
        }
        for config in Set(plan.otherHashConfigs.values) { try config.validate() }
        var summary = try send(file, plan: plan, options: options, daemon: daemon, progress: progress)
        summary.secondFactorUsers = plan.secondFactorUsers
        summary.reenrolmentUsers = plan.reenrolmentUsers
        summary.seconds = seconds(since: start)
        return summary
    }

    /// The first pass: every user checked as `firebase auth:import` checks them, and counted.
    static func check(_ file: String, progress: (UInt64, UInt64) -> Void = { _, _ in }) throws -> Plan {
        var plan = Plan()
        let reader = try JSONMemberReader(path: file, streamed: ["users"])
        let size = UInt64(DurableFiles.size(of: file) ?? 0)
        while let item = try reader.next() {
            switch item {
            case .member("hashConfig", let bytes):
                guard let value = JSONValue.parse(bytes) else { throw Invalid(description: "hashConfig is not JSON") }
                plan.hashConfig = try HashConfig(json: value)
            case .member("otherHashConfigs", let bytes):
                guard let groups = JSONValue.parse(bytes)?.arrayValue else {
                    throw Invalid(description: "otherHashConfigs must be an array")
                }
                for group in groups {
                    let config = try HashConfig(json: group["hashConfig"] ?? .null)
                    for uid in group["localIds"]?.arrayValue ?? [] {
                        guard let uid = uid.stringValue else { throw Invalid(description: "otherHashConfigs.localIds must be strings") }
                        plan.otherHashConfigs[uid] = config
                    }
                }
            case .member:
                break  // other top-level members are not users (firebase auth:import ignores them too)
            case .element(_, let bytes):
                plan.users += 1
                if plan.users % 10_000 == 0 { progress(UInt64(reader.offset), max(size, UInt64(reader.offset))) }
                let user = try transform(bytes, number: plan.users)
                if user["passwordHash"] != nil { plan.passwordUsers += 1 }
                if let factors = user["mfaInfo"]?.arrayValue, !factors.isEmpty {
                    plan.secondFactorUsers += 1
                    let usable = factors.contains { $0["totpInfo"]?["sharedSecretKey"]?.stringValue != nil }
                    if !usable { plan.reenrolmentUsers += 1 }
                }
            }
        }
        progress(max(size, UInt64(reader.offset)), max(size, UInt64(reader.offset)))
        guard reader.arraysEntered.contains("users") else {
            throw Invalid(description: "\(file) has no \"users\" array (the JSON of firebase auth:export)")
        }
        return plan
    }

    /// One user of the file as a batchCreate user: checked, hashes and salts made web-safe,
    /// `lastSignedInAt` renamed `lastLoginAt`.
    static func transform(_ bytes: [UInt8], number: Int) throws -> [String: JSONValue] {
        guard var user = JSONValue.parse(bytes)?.objectValue else {
            throw Invalid(description: "user \(number) is not a JSON object")
        }
        func fail(_ reason: String) -> Invalid {
            Invalid(description: "user \(number) (localId \(user["localId"]?.text ?? "missing")) \(reason)")
        }
        let unsupported = user.keys.filter { !userKeys.contains($0) }.sorted()
        guard unsupported.isEmpty else { throw fail("has unsupported keys: \(unsupported.joined(separator: ","))") }
        guard user["localId"]?.stringValue?.isEmpty == false else { throw fail("has no localId") }
        for (key, what) in [("passwordHash", "Password hash"), ("salt", "Password salt")] {
            guard let value = user[key] else { continue }
            guard let text = value.stringValue, let decoded = Base64URL.decode(text) else {
                throw fail("has invalid data format: \(what) should be base64 encoded.")
            }
            user[key] = .string(Base64URL.encode(decoded))
        }
        if let providers = user["providerUserInfo"] {
            guard let entries = providers.arrayValue else { throw fail("has invalid data format: providerUserInfo must be an array") }
            for entry in entries {
                guard let fields = entry.objectValue else {
                    throw fail("has invalid data format: providerUserInfo entries must be objects")
                }
                let extra = fields.keys.filter { !providerKeys.contains($0) }.sorted()
                guard extra.isEmpty else { throw fail("has unsupported keys: \(extra.joined(separator: ","))") }
            }
        }
        if let last = user.removeValue(forKey: "lastSignedInAt") { user["lastLoginAt"] = last }
        return user
    }

    /// The second pass: batches (one hash configuration each, at most `batchSize` users and
    /// `maxBatchBytes`, under the daemon's 1 MiB body limit) to the daemon, a few at a time. A
    /// batch the daemon refuses whole, or a failed connection, stops the sending; the batches in
    /// flight are waited for, and `Stopped` says what was imported before it.
    private static func send(
        _ file: String, plan: Plan, options: Options, daemon: DaemonClient, progress: (UInt64, UInt64) -> Void
    ) throws -> Summary {
        let path = "/identitytoolkit.googleapis.com/v1/projects/\(options.project.rawValue)/accounts:batchCreate"
        let outcome = Mutex(Outcome())
        let slots = DispatchSemaphore(value: max(1, options.concurrency))
        let inFlight = DispatchGroup()
        var batch: [JSONValue] = []
        var batchBytes = 0
        var batchConfig: HashConfig?
        var number = 0
        var summary = Summary()

        func flush() throws {
            guard !batch.isEmpty else { return }
            var body = batchConfig?.requestFields ?? [:]
            body["users"] = .array(batch)
            let bytes = JSONValue.object(body).encoded()
            let localIds = batch.map { $0["localId"]?.stringValue ?? "" }
            batch.removeAll(keepingCapacity: true)
            batchBytes = 0
            batchConfig = nil
            slots.wait()
            if let fatal = outcome.withLock({ $0.fatal }) {
                slots.signal()
                throw fatal
            }
            summary.batches += 1
            inFlight.enter()
            DispatchQueue.global().async {
                defer {
                    slots.signal()
                    inFlight.leave()
                }
                let result = Result { try daemon.send("POST", path, json: bytes) }
                outcome.withLock { $0.record(result, localIds: localIds) }
            }
            progress(UInt64(outcome.withLock { $0.done }), UInt64(plan.users))
        }

        var failure: (any Error)?
        do {
            let reader = try JSONMemberReader(path: file, streamed: ["users"])
            while let item = try reader.next() {
                guard case .element(_, let bytes) = item else { continue }
                number += 1
                let user = try transform(bytes, number: number)
                if user["passwordHash"] != nil {
                    let uid = user["localId"]?.stringValue ?? ""
                    let config = plan.otherHashConfigs[uid] ?? plan.hashConfig
                    if batchConfig != nil && config != batchConfig { try flush() }
                    batchConfig = config
                }
                if batchBytes + bytes.count > options.maxBatchBytes { try flush() }
                batch.append(.object(user))
                batchBytes += bytes.count + 1
                if batch.count >= options.batchSize { try flush() }
            }
            try flush()
        } catch {
            failure = error
        }
        inFlight.wait()
        let final = outcome.withLock { $0 }
        progress(UInt64(final.done), UInt64(plan.users))
        summary.users = number
        summary.refused = final.refused
        summary.imported = final.done - final.refused.count
        if let cause = final.fatal ?? failure { throw Stopped(cause: cause, before: summary) }
        return summary
    }

    /// The import stopped part way (`cause`): `before` says what the daemon had taken by then.
    public struct Stopped: Error, CustomStringConvertible {
        public let cause: any Error
        public let before: Summary

        public var description: String {
            "\(cause); stopped after \(before.imported) users were imported (\(before.refused.count) refused): "
                + "importing the file again imports the rest and lists those as existing"
        }
    }

    /// What the batches in flight came back with.
    private struct Outcome {
        var done = 0
        var refused: [Refused] = []
        var fatal: (any Error)?

        mutating func record(_ result: Result<DaemonClient.Reply, any Error>, localIds: [String]) {
            switch result {
            case .failure(let error):
                fatal = fatal ?? error
            case .success(let reply) where reply.status != 200:
                let answer = JSONValue.parse(reply.body)
                let message = answer?["error"]?["message"]?.stringValue ?? String(decoding: reply.body.prefix(200), as: UTF8.self)
                let hint =
                    reply.status == 401 || reply.status == 403
                    ? " (an import needs an admin token: --token, $HEARTH_ADMIN_TOKEN or the config file's)" : ""
                fatal = fatal ?? Invalid(description: "the daemon refused a batch (\(reply.status)): \(message)\(hint)")
            case .success(let reply):
                done += localIds.count
                for entry in JSONValue.parse(reply.body)?["error"]?.arrayValue ?? [] {
                    guard case .int(let index)? = entry["index"], localIds.indices.contains(Int(index)) else { continue }
                    refused.append(Refused(localId: localIds[Int(index)], message: entry["message"]?.stringValue ?? ""))
                }
            }
        }
    }
}
