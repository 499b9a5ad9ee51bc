import Foundation
import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// The Admin SDK's bulk calls: batchGet (list_users), query, createSessionCookie, batchDelete,
/// batchCreate (import_users).
struct AdminEndpoints: Sendable {
    let accounts: AccountService
    let sessions: SessionService
    let projects: ProjectService

    func batchGet(_ call: ToolkitCall) throws -> JSONValue {
        try call.requireAdmin()
        // In the query (v1's GET), or the body (the legacy `downloadAccount` POST).
        let requested = try Int(call.query["maxResults"] ?? "") ?? call.fields.int("maxResults").map { Int(clamping: $0) } ?? 20
        let limit = requested <= 0 ? 20 : min(requested, 1000)
        let token = try call.query["nextPageToken"] ?? call.fields.string("nextPageToken")
        // A token that is no uid was not ours: restarting from the first page would loop an export.
        let after = try token.flatMap { $0.isEmpty ? nil : $0 }.map { token in
            guard let uid = UserID(token) else { throw FirebaseError.bad("INVALID_PAGE_SELECTION") }
            return uid
        }
        let users = try accounts.listAccounts(after: after, limit: limit, call.caller)
        var body: [String: JSONValue] = [
            "kind": "identitytoolkit#DownloadAccountResponse", "users": .array(users.map { UserRecord.json($0, .exported) }),
        ]
        // A full page names its last uid; the next page starts after it.
        if users.count == limit, let last = users.last { body["nextPageToken"] = .string(last.uid.rawValue) }
        return .object(body)
    }

    /// `accounts:query`: the project's accounts in uid order (`limit`/`offset` page them).
    func queryAccounts(_ call: ToolkitCall) throws -> JSONValue {
        try call.requireAdmin()
        let fields = call.fields
        for unsupported in ["expression"] where fields.has(unsupported) {
            throw FirebaseError.invalidArgument("/\(unsupported) is not supported")
        }
        if let sortBy = try fields.string("sortBy"), sortBy != "USER_ID" && sortBy != "SORT_BY_FIELD_UNSPECIFIED" {
            throw FirebaseError.invalidArgument("/sortBy only USER_ID is supported")
        }
        let count = try accounts.accountCount(call.caller)
        var body: [String: JSONValue] = ["recordsCount": .string(String(count))]
        guard try fields.bool("returnUserInfo") ?? true else { return .object(body) }
        let limit = Int(clamping: try fields.int("limit") ?? 500)
        let offset = Int(clamping: try fields.int("offset") ?? 0)
        guard (1...1000).contains(limit), offset >= 0 else { throw FirebaseError.invalidArgument("/limit or /offset out of range") }
        // Past the end is an empty page; the skipped accounts are stepped over, not decoded.
        var users = offset < count ? try accounts.listAccounts(after: nil, skipping: offset, limit: limit, call.caller) : []
        if try fields.string("order") == "DESC" { users.reverse() }
        body["userInfo"] = .array(users.map { UserRecord.json($0, .exported) })
        return .object(body)
    }

    /// A 14-day credential minted from a one-hour one: Firebase's Admin-only call, on every path.
    func createSessionCookie(_ call: ToolkitCall) throws -> JSONValue {
        try call.requireAdmin()
        let cookie = try sessions.createSessionCookie(
            idToken: try call.fields.string("idToken"), validDuration: try call.fields.int("validDuration"), call.caller)
        return ["sessionCookie": .string(cookie)]
    }

    func batchDelete(_ call: ToolkitCall) async throws -> JSONValue {
        try call.requireAdmin()
        let ids = try call.fields.strings("localIds")
        guard (1...1000).contains(ids.count) else { throw FirebaseError.bad("LOCAL_ID_LIST_EXCEEDS_LIMIT") }
        let force = try call.fields.bool("force") ?? false
        let kept = try await accounts.deleteAccounts(ids.compactMap(UserID.init), force: force, call.caller)
        let errors: [JSONValue] = ids.enumerated().compactMap { index, id in
            guard let uid = UserID(id), kept.contains(uid) else { return nil }
            return [
                "index": .int(Int64(index)), "localId": .string(id),
                "message": "NOT_DISABLED : Disable the account before batch deletion.",
            ]
        }
        return errors.isEmpty ? [:] : ["errors": .array(errors)]
    }

    func batchCreate(_ call: ToolkitCall) async throws -> JSONValue {
        try call.requireAdmin()
        let entries = try call.fields.objects("users")
        guard !entries.isEmpty else { throw FirebaseError.bad("MISSING_USER_ACCOUNT") }
        guard entries.count <= 1000 else { throw FirebaseError.bad("MAXIMUM_USER_COUNT_EXCEEDED") }
        let overwrite = try call.fields.bool("allowOverwrite") ?? false
        try Self.checkDuplicates(
            entries, sanityCheck: try call.fields.bool("sanityCheck") ?? false, overwrite: overwrite,
            oneAccountPerEmail: try projects.config(call.caller).oneAccountPerEmail)
        let hashing = try ImportHashOptions(call.fields)
        var failures: [(index: Int, message: String)] = []
        var users: [AccountService.ImportedUser] = []
        let now = accounts.now
        var indexes: [Int] = []
        for (index, entry) in entries.enumerated() {
            do {
                var (uid, user) = try importedUser(entry, hashing, now: now)
                let factors = try ImportedSecondFactors.parse(entry.objects("mfaInfo"), sealer: accounts.secrets, now: now)
                // A plain password is hashed here, with Hearth's own parameters.
                if user.password == nil, let raw = try entry.string("rawPassword") {
                    user.password = try await accounts.hash(try Validation.password(raw), for: call.caller)
                }
                users.append(AccountService.ImportedUser(uid: uid, account: user, secondFactors: factors))
                indexes.append(index)
            } catch let error as FirebaseError {
                failures.append((index, error.message))
            }
        }
        for failure in try await accounts.importUsers(users, overwrite: overwrite, call.caller) {
            failures.append((indexes[failure.index], failure.message))
        }
        let errors = failures.sorted { $0.index < $1.index }.map { failure -> JSONValue in
            ["index": .int(Int64(failure.index)), "message": .string(failure.message)]
        }
        return ["kind": "identitytoolkit#UploadAccountResponse", "error": .array(errors)]
    }

    /// The request-level refusals, in Firebase's order: with `sanityCheck`, an email (with one
    /// account per email) or a provider's raw id twice in the payload; without `allowOverwrite`,
    /// a localId twice (a missing one counts as "").
    /// Firebase's request-level duplicate checks (the domain's `ImportBatch`), in its words.
    static func checkDuplicates(_ entries: [RequestFields], sanityCheck: Bool, overwrite: Bool, oneAccountPerEmail: Bool) throws {
        let batch = try entries.map { entry in
            ImportBatch.Entry(
                localId: try entry.string("localId") ?? "", email: try entry.string("email"),
                identities: try entry.objects("providerUserInfo").compactMap { provider in
                    guard let providerId = try provider.string("providerId"), let rawId = try provider.string("rawId") else { return nil }
                    return (providerId, rawId)
                })
        }
        do {
            try ImportBatch.check(batch, sanityCheck: sanityCheck, overwrite: overwrite, oneAccountPerEmail: oneAccountPerEmail)
        } catch .email(let email) {
            throw FirebaseError.bad("DUPLICATE_EMAIL : \(email)")
        } catch .rawId(let providerId, let rawId) {
            throw FirebaseError.bad("DUPLICATE_RAW_ID : Provider id(\(providerId)), Raw id(\(rawId))")
        } catch .localId(let localId) {
            throw FirebaseError.bad("DUPLICATE_LOCAL_ID : \(localId)")
        }
    }

    /// One `users[]` entry as the account it creates; `createdAt` defaults to the import time.
    private func importedUser(_ fields: RequestFields, _ hashing: ImportHashOptions, now: Int64) throws
        -> (UserID, AccountCreated)
    {
        guard let id = try fields.string("localId"), !id.isEmpty else { throw FirebaseError.bad("localId is missing") }
        guard let uid = UserID(id) else { throw FirebaseError.bad("localId is invalid") }
        // Times from the past, or ahead of this clock by no more than ID tokens may be: the
        // account's tokens carry them as auth_time, which a verifier refuses from the future.
        func time(_ key: String) throws -> Int64? {
            guard let value = try fields.int(key) else { return nil }
            guard (0...(now + TokenIssuer.allowedClockSkew * 1000)).contains(value) else {
                throw FirebaseError.bad("\(key) is out of range")
            }
            return value
        }
        var user = AccountCreated(method: .import, createdAt: try time("createdAt") ?? now)
        if let email = try fields.string("email") {
            guard let valid = try? Validation.email(email) else { throw FirebaseError.bad("email is invalid") }
            user.email = valid
        }
        user.emailVerified = try fields.bool("emailVerified") ?? false
        user.disabled = try fields.bool("disabled") ?? false
        user.displayName = try fields.string("displayName", maxBytes: Validation.MaxBytes.displayName)
        user.photoUrl = try fields.string("photoUrl", maxBytes: Validation.MaxBytes.photoUrl)
        if let phone = try fields.string("phoneNumber") {
            guard let valid = try? Validation.phoneNumber(phone) else { throw FirebaseError.bad("phone number format is invalid") }
            user.phoneNumber = valid
        }
        if let claims = try fields.string("customAttributes") {
            do {
                user.customClaims = try Validation.customClaims(claims)
            } catch let error as FirebaseError {
                // The per-user messages Firebase gives for these.
                throw FirebaseError.bad(
                    error.message.hasPrefix("CLAIMS_TOO_LARGE")
                        ? "Custom claims provided are too large."
                        : error.message.hasPrefix("FORBIDDEN_CLAIM")
                            ? "Custom claims provided include a reserved claim."
                            : "Invalid custom claims provided.")
            }
        }
        user.lastSignInAt = try time("lastLoginAt")
        if let hash = try fields.string("passwordHash") {
            user.password = try hashing.passwordHash(hash: hash, salt: try fields.string("salt"))
        }
        for provider in try fields.objects("providerUserInfo") {
            guard
                let providerId = try provider.string("providerId", maxBytes: Validation.MaxBytes.providerId)
                    .map(ProviderID.init(rawValue:)),
                let rawId = try provider.string("rawId", maxBytes: Validation.MaxBytes.federatedId),
                !providerId.rawValue.isEmpty, !rawId.isEmpty
            else { throw FirebaseError.bad("federatedId or (providerId & rawId) is required") }
            // password and phone entries are derived from the account itself.
            guard providerId.isFederated else { continue }
            user.providers.append(
                ProviderLink(
                    providerId: providerId, federatedId: rawId,
                    email: try provider.string("email", maxBytes: Validation.MaxBytes.email).map(normalizeEmail),
                    displayName: try provider.string("displayName", maxBytes: Validation.MaxBytes.displayName),
                    photoUrl: try provider.string("photoUrl", maxBytes: Validation.MaxBytes.photoUrl),
                    screenName: try provider.string("screenName", maxBytes: Validation.MaxBytes.screenName)))
        }
        return (uid, user)
    }
}
/// The top-level hash options of a batchCreate: how the imported `passwordHash`es were made.
/// Checked once per request, so a bad option is one clear 400 rather than a failure per user.
struct ImportHashOptions {
    /// As stored (Firebase's modified scrypt, which the API calls "SCRYPT", is `.firebaseScrypt`).
    var algorithm: PasswordHash.Algorithm?
    var rounds: Int?
    var memoryCost: Int?
    var blockSize: Int?
    var parallelization: Int?
    var keyLength: Int?
    var key: [UInt8]?
    var saltSeparator: [UInt8]?
    var passwordFirst = false

    init(_ fields: RequestFields) throws {
        guard let name = try fields.string("hashAlgorithm")?.uppercased() else { return }
        rounds = try fields.int("rounds").map(Int.init)
        memoryCost = try fields.int("memoryCost").map(Int.init)
        key = try Self.bytes(fields, "signerKey", error: "INVALID_SIGNER_KEY")
        switch try fields.string("passwordHashOrder") {
        case nil, "SALT_AND_PASSWORD": passwordFirst = false
        case "PASSWORD_AND_SALT": passwordFirst = true
        default: throw FirebaseError.bad("INVALID_PASSWORD_HASH_ORDER")
        }
        guard let algorithm = PasswordHash.Algorithm(importName: name) else {
            // Accepting a hash no sign-in could ever check would lock those users out silently.
            throw FirebaseError.bad("INVALID_HASH_ALGORITHM : Hearth cannot verify \(name) password hashes")
        }
        self.algorithm = algorithm
        switch algorithm {
        case .firebaseScrypt:
            guard key != nil else { throw FirebaseError.bad("MISSING_SIGNER_KEY") }
            saltSeparator = try Self.bytes(fields, "saltSeparator", error: "INVALID_SALT_SEPARATOR")
        case .standardScrypt:
            // N is given as itself, and must be a power of two; it is stored as log2(N).
            guard let cost = try fields.int("cpuMemCost"), cost > 1, cost & (cost - 1) == 0, cost <= 1 << 20 else {
                throw FirebaseError.bad("INVALID_MEMORY_COST")
            }
            memoryCost = cost.trailingZeroBitCount
            blockSize = try fields.int("blockSize").map(Int.init)
            parallelization = try fields.int("parallelization").map(Int.init)
            keyLength = try fields.int("dkLen").map(Int.init)
        case _ where algorithm.hmacDigestLength != nil:
            guard key != nil else { throw FirebaseError.bad("MISSING_SIGNER_KEY") }
        default:
            break  // bcrypt and PBKDF2: their parameters are the per-user hash's and `rounds`
        }
        // Work factors hold for every user of the request: one clear 400, before any user.
        if let violation = StoredHashLimits.costViolation(stored(hash: [], salt: [])) { throw FirebaseError.bad(violation) }
    }

    private static func bytes(_ fields: RequestFields, _ name: String, error: String) throws -> [UInt8]? {
        try fields.string(name).map { text in
            guard let bytes = Base64URL.decode(text) else { throw FirebaseError.bad(error) }
            return bytes
        }
    }

    func passwordHash(hash: String, salt: String?) throws -> PasswordHash {
        guard algorithm != nil else { throw FirebaseError.bad("MISSING_HASH_ALGORITHM") }
        guard let hashBytes = Base64URL.decode(hash) else { throw FirebaseError.bad("INVALID_PASSWORD_HASH") }
        let saltBytes = try salt.map { text in
            guard let bytes = Base64URL.decode(text) else { throw FirebaseError.bad("INVALID_SALT") }
            return bytes
        }
        let stored = stored(hash: hashBytes, salt: saltBytes ?? [])
        // A hash no sign-in could check (or one that would match anything) is refused here.
        if let violation = StoredHashLimits.violation(stored) { throw FirebaseError.bad(violation) }
        return stored
    }

    /// A user's hash under these options (`algorithm` is set once `init` has read it).
    private func stored(hash: [UInt8], salt: [UInt8]) -> PasswordHash {
        PasswordHash(
            algorithm: algorithm ?? "", hash: hash, salt: salt, rounds: rounds, memoryCost: memoryCost,
            blockSize: blockSize, parallelization: parallelization, keyLength: keyLength, key: key,
            saltSeparator: saltSeparator, passwordFirst: passwordFirst)
    }
}
