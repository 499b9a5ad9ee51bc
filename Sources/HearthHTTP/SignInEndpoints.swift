import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// signUp, signInWithPassword, signInWithCustomToken, signInWithEmailLink and createAuthUri; signInWithIdp is in
/// FederatedEndpoint.swift.
struct SignInEndpoints: Sendable {
    let signIn: SignInService
    let accounts: AccountService
    let projects: ProjectService

    func signUp(_ call: ToolkitCall) async throws -> JSONValue {
        let fields = call.fields
        let caller = call.caller
        if caller.isAdmin && !fields.has("idToken") {
            var user = AccountService.NewUser()
            if let uid = try fields.string("localId") {
                guard let parsed = UserID(uid) else { throw FirebaseError.bad("INVALID_LOCAL_ID") }
                user.uid = parsed
            }
            user.email = try fields.string("email")
            user.password = try fields.string("password")
            user.displayName = try fields.string("displayName", maxBytes: Validation.MaxBytes.displayName)
            user.photoUrl = try fields.string("photoUrl", maxBytes: Validation.MaxBytes.photoUrl)
            user.phoneNumber = try fields.string("phoneNumber")
            user.emailVerified = try fields.bool("emailVerified") ?? false
            user.disabled = try fields.bool("disabled") ?? false
            let account = try await accounts.createUser(user, caller)
            var body: [String: JSONValue] = ["kind": "identitytoolkit#SignupNewUserResponse", "localId": .string(account.uid.rawValue)]
            if let email = account.email { body["email"] = .string(email) }
            if let name = account.displayName { body["displayName"] = .string(name) }
            return .object(body)
        }
        guard !fields.has("localId") else { throw FirebaseError.bad("UNEXPECTED_PARAMETER : User ID") }
        let email = try fields.string("email")
        let password = try fields.string("password")
        let displayName = try fields.string("displayName", maxBytes: Validation.MaxBytes.displayName)
        let result: SignInResult
        if let idToken = try fields.string("idToken") {
            result = try await signIn.linkPassword(
                idToken: idToken, email: email, password: password, displayName: displayName, caller, origin: call.linkOrigin)
        } else if !(email ?? "").isEmpty || !(password ?? "").isEmpty {
            result = try await signIn.signUpWithPassword(email: email, password: password, displayName: displayName, caller)
        } else {
            // The emulator's order: nothing given is an anonymous sign-up, but an empty email
            // string is not an email (once anonymous sign-up is known to be allowed).
            if email == "" {
                guard try projects.config(caller).anonymousEnabled else { throw FirebaseError.bad("ADMIN_ONLY_OPERATION") }
                throw FirebaseError.invalidEmail
            }
            result = try await signIn.signUpAnonymously(caller)
        }
        var body = UserRecord.tokens(result.tokens)
        body["kind"] = "identitytoolkit#SignupNewUserResponse"
        body["localId"] = .string(result.account.uid.rawValue)
        if let email = result.account.email { body["email"] = .string(email) }
        if let name = result.account.displayName { body["displayName"] = .string(name) }
        return .object(body)
    }

    func signInWithPassword(_ call: ToolkitCall) async throws -> JSONValue {
        let result = try await signIn.signInWithPassword(
            email: try call.fields.string("email"), password: try call.fields.string("password"), call.caller)
        var body = UserRecord.tokens(result.tokens)
        body["kind"] = "identitytoolkit#VerifyPasswordResponse"
        body["registered"] = true
        body["localId"] = .string(result.account.uid.rawValue)
        if let email = result.account.email { body["email"] = .string(email) }
        if let name = result.account.displayName { body["displayName"] = .string(name) }
        return .object(body)
    }

    func signInWithCustomToken(_ call: ToolkitCall) async throws -> JSONValue {
        let result = try await signIn.signInWithCustomToken(try call.fields.string("token"), call.caller)
        var body = UserRecord.tokens(result.tokens)
        body["kind"] = "identitytoolkit#VerifyCustomTokenResponse"
        body["isNewUser"] = .bool(result.isNewUser)
        return .object(body)
    }

    func signInWithEmailLink(_ call: ToolkitCall) async throws -> JSONValue {
        let fields = call.fields
        let result = try await signIn.signInWithEmailLink(
            email: try fields.string("email"), oobCode: try fields.string("oobCode"), idToken: try fields.string("idToken"),
            call.caller)
        var body = UserRecord.tokens(result.tokens)
        body["kind"] = "identitytoolkit#EmailLinkSigninResponse"
        body["localId"] = .string(result.account.uid.rawValue)
        body["email"] = result.account.email.map(JSONValue.string) ?? .null
        body["isNewUser"] = .bool(result.isNewUser)
        return .object(body)
    }

    func createAuthUri(_ call: ToolkitCall) throws -> JSONValue {
        guard let identifier = try call.fields.string("identifier"), !identifier.isEmpty else {
            throw FirebaseError.bad("MISSING_IDENTIFIER")
        }
        guard let continueUri = try call.fields.string("continueUri"), !continueUri.isEmpty else {
            throw FirebaseError.bad("MISSING_CONTINUE_URI")
        }
        guard (try? Validation.email(identifier)) != nil else { throw FirebaseError.bad("INVALID_IDENTIFIER") }
        _ = try Validation.continueURL(continueUri)
        var body: [String: JSONValue] = [
            "kind": "identitytoolkit#CreateAuthUriResponse",
            "sessionId": .string(try call.fields.string("sessionId") ?? AuthContext.randomID()),
        ]
        // Under email enumeration protection the answer is only the kind and the session.
        if let methods = try signIn.signInMethods(for: identifier, call.caller) {
            body["registered"] = .bool(methods.registered)
            body["allProviders"] = .array(methods.allProviders.map { .string($0.rawValue) })
            body["signinMethods"] = .array(methods.signInMethods.map { .string($0.rawValue) })
        }
        return .object(body)
    }
}
