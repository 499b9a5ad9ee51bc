import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// lookup, update and delete: an account by its own ID token, or by an admin.
struct AccountEndpoints: Sendable {
    let accounts: AccountService
    let actionCodes: ActionCodeService

    func lookup(_ call: ToolkitCall) throws -> JSONValue {
        let fields = call.fields
        var users: [Account]
        var hashes = UserRecord.PasswordHashes.redacted
        let identifiers = ["localId", "email", "phoneNumber", "federatedUserId"]
        if call.caller.isAdmin && identifiers.contains(where: fields.has) {
            let uids = try fields.strings("localId").map { uid in
                guard let parsed = UserID(uid) else { throw FirebaseError.bad("INVALID_LOCAL_ID") }
                return parsed
            }
            let federated = try fields.objects("federatedUserId").compactMap { entry -> (providerId: ProviderID, rawId: String)? in
                guard let provider = try entry.string("providerId"), let rawId = try entry.string("rawId") else { return nil }
                return (ProviderID(provider), rawId)
            }
            users = try accounts.lookup(
                uids: uids, emails: try fields.strings("email"), phoneNumbers: try fields.strings("phoneNumber"),
                federated: federated, call.caller)
            hashes = .exported
        } else {
            users = [try accounts.account(bearing: try fields.string("idToken"), call.caller)]
        }
        var body: [String: JSONValue] = ["kind": "identitytoolkit#GetAccountInfoResponse"]
        // "Not found" is 200 without users: the Admin SDK builds its own message from that.
        if !users.isEmpty { body["users"] = .array(users.map { UserRecord.json($0, hashes) }) }
        return .object(body)
    }

    func update(_ call: ToolkitCall) async throws -> JSONValue {
        let fields = call.fields
        let caller = call.caller
        if fields.has("oobCode") && !caller.isAdmin {
            // applyActionCode: the code names the account; every other field is ignored.
            let (account, info) = try await actionCodes.applyActionCode(try fields.string("oobCode"), caller, origin: call.linkOrigin)
            return Self.updateResponse(account, tokens: nil, newEmail: info.requestType == .verifyAndChangeEmail ? info.newEmail : nil)
        }
        let target = try self.target(call)
        guard caller.isAdmin || !fields.has("customAttributes") else { throw FirebaseError.insufficientPermission }
        var changes = AccountService.Changes()
        changes.email = try fields.string("email")
        changes.password = try fields.string("password")
        changes.displayName = try fields.string("displayName", maxBytes: Validation.MaxBytes.displayName)
        changes.photoUrl = try fields.string("photoUrl", maxBytes: Validation.MaxBytes.photoUrl)
        changes.deleteAttributes = try fields.strings("deleteAttribute")
        changes.deleteProviders = try fields.strings("deleteProvider")
        changes.validSince = try fields.int("validSince")
        if case .idToken = target, fields.has("disableUser") { changes.disabled = try fields.bool("disableUser") }
        if caller.isAdmin {
            changes.disabled = try fields.bool("disableUser")
            changes.emailVerified = try fields.bool("emailVerified")
            changes.customAttributes = try fields.string("customAttributes")
            changes.phoneNumber = try fields.string("phoneNumber")
        }
        if fields.has("linkProviderUserInfo") { changes.linkProvider = try Self.providerToLink(fields) }
        if fields.has("mfa") { changes.keptSecondFactors = try Self.keptSecondFactors(fields) }
        let result = try await accounts.update(target, changes, caller, origin: call.linkOrigin)
        return Self.updateResponse(result.account, tokens: result.tokens)
    }

    /// `linkProviderUserInfo` (the Admin SDKs' `providerToLink`), checked as the emulator does:
    /// a provider id, then a raw id.
    static func providerToLink(_ fields: RequestFields) throws -> ProviderLink {
        guard let link = try fields.object("linkProviderUserInfo") else {
            throw FirebaseError.bad("MISSING_PROVIDER_ID")
        }
        guard let providerId = try link.string("providerId", maxBytes: Validation.MaxBytes.providerId), !providerId.isEmpty else {
            throw FirebaseError.bad("MISSING_PROVIDER_ID")
        }
        guard let rawId = try link.string("rawId", maxBytes: Validation.MaxBytes.federatedId), !rawId.isEmpty else {
            throw FirebaseError.bad("MISSING_RAW_ID")
        }
        guard ProviderID(rawValue: providerId).isFederated else { throw FirebaseError.bad("INVALID_PROVIDER_ID") }
        return ProviderLink(
            providerId: ProviderID(rawValue: providerId), federatedId: rawId,
            email: try link.string("email", maxBytes: Validation.MaxBytes.email).map(normalizeEmail),
            displayName: try link.string("displayName", maxBytes: Validation.MaxBytes.displayName),
            photoUrl: try link.string("photoUrl", maxBytes: Validation.MaxBytes.photoUrl),
            screenName: try link.string("screenName", maxBytes: Validation.MaxBytes.screenName))
    }

    /// `mfa.enrollments` (the Admin SDKs' `multiFactor.enrolledFactors`): the factors kept, by
    /// enrollment id; absent or empty, none.
    static func keptSecondFactors(_ fields: RequestFields) throws -> [String] {
        guard let mfa = try fields.object("mfa"), let enrollments = mfa.values["enrollments"] else { return [] }
        guard enrollments != .null else { throw FirebaseError.invalidArgument("/mfa/enrollments must be array") }
        return try mfa.objects("enrollments").map { entry in
            guard let id = try entry.string("mfaEnrollmentId"), !id.isEmpty else {
                throw FirebaseError.bad("INVALID_MFA_ENROLLMENT_ID : mfaEnrollmentId must be defined.")
            }
            return id
        }
    }

    static func updateResponse(_ account: Account, tokens: IssuedTokens?, newEmail: String? = nil) -> JSONValue {
        var body: [String: JSONValue] = [
            "kind": "identitytoolkit#SetAccountInfoResponse", "localId": .string(account.uid.rawValue),
            "providerUserInfo": .array(UserRecord.providerUserInfo(account)),
        ]
        if let email = account.email {
            body["email"] = .string(email)
            body["emailVerified"] = .bool(account.emailVerified)
        }
        if let newEmail { body["newEmail"] = .string(newEmail) }
        if let name = account.displayName { body["displayName"] = .string(name) }
        if let photo = account.photoUrl { body["photoUrl"] = .string(photo) }
        // Redacted even for admins: only the calls that export accounts carry hashes.
        if account.password != nil { body["passwordHash"] = UserRecord.redactedHash }
        if let tokens { body.merge(UserRecord.tokens(tokens)) { _, new in new } }
        return .object(body)
    }

    func delete(_ call: ToolkitCall) async throws -> JSONValue {
        let target = call.caller.isAdmin ? try self.target(call) : .idToken(try call.fields.string("idToken"))
        try await accounts.delete(target, call.caller)
        return ["kind": "identitytoolkit#DeleteAccountResponse"]
    }

    /// Admins name a uid; users present their ID token.
    func target(_ call: ToolkitCall) throws -> AccountService.Target {
        if call.caller.isAdmin {
            guard let uid = try call.fields.string("localId") else { throw FirebaseError.missingLocalId }
            guard let parsed = UserID(uid) else { throw FirebaseError.userNotFound }
            return .uid(parsed)
        }
        guard let idToken = try call.fields.string("idToken") else {
            throw FirebaseError.bad("INVALID_REQ_TYPE : Unsupported request parameters.")
        }
        return .idToken(idToken)
    }
}
