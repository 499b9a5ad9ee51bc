import Foundation
import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// signInWithIdp (verifyAssertion).
extension SignInEndpoints {
    func signInWithIdp(_ call: ToolkitCall) async throws -> JSONValue {
        let fields = call.fields
        let identity = try await self.identity(call)
        var body: [String: JSONValue] = [
            "kind": "identitytoolkit#VerifyAssertionResponse", "context": "", "providerId": .string(identity.providerId.rawValue),
            "federatedId": .string(
                identity.providerId == .google ? "https://accounts.google.com/\(identity.subject)" : identity.subject),
            "rawUserInfo": .string(identity.rawUserInfo.text),
        ]
        // The emulator hands out a placeholder when the fake IdP gave none; real providers' only.
        if let accessToken = identity.accessToken {
            body["oauthAccessToken"] = .string(accessToken)
        } else if signIn.settings.fakeIdentityProvider {
            body["oauthAccessToken"] = .string("FirebaseAuthEmulatorFakeAccessToken_\(identity.providerId)")
        }
        if let idToken = identity.idToken { body["oauthIdToken"] = .string(idToken) }
        if let email = identity.email { body["email"] = .string(email) }
        if let name = identity.displayName {
            body["displayName"] = .string(name)
            body["fullName"] = .string(name)
        }
        if let photo = identity.photoUrl { body["photoUrl"] = .string(photo) }
        if let screenName = identity.screenName { body["screenName"] = .string(screenName) }
        // Google's profile carries the name's parts; the SDKs read them from these two fields.
        if identity.providerId == .google {
            if let first = identity.rawUserInfo["given_name"]?.stringValue { body["firstName"] = .string(first) }
            if let last = identity.rawUserInfo["family_name"]?.stringValue { body["lastName"] = .string(last) }
        }
        let returnCredential = try fields.bool("returnIdpCredential") == true
        let outcome: SignInService.FederatedOutcome
        do {
            outcome = try await signIn.signInWithIdentity(
                identity, idToken: try fields.string("idToken"), createsAccount: try fields.bool("autoCreate") ?? true, call.caller)
        } catch let required as SecondFactorRequired {
            // The provider's profile, as for a sign-in, then the second step instead of tokens.
            body.merge(MultiFactorEndpoints.challenge(required)) { _, new in new }
            return .object(body)
        } catch let error as FirebaseError
            where returnCredential && ["FEDERATED_USER_ID_ALREADY_LINKED", "EMAIL_EXISTS"].contains(error.code)
        {
            // With returnIdpCredential the SDKs expect conflicts as 200 + errorMessage, so they
            // can hand the credential back to the app (credentialAlreadyInUse).
            body["errorMessage"] = .string(error.code)
            return .object(body)
        }
        switch outcome {
        case .signedIn(let result):
            body.merge(UserRecord.tokens(result.tokens)) { _, new in new }
            body["localId"] = .string(result.account.uid.rawValue)
            if result.isNewUser { body["isNewUser"] = true }
            if let email = result.account.email, email == identity.email {
                body["emailVerified"] = .bool(result.account.emailVerified)
            }
        case .needConfirmation(let email, let uid, let providers):
            body["needConfirmation"] = true
            body["email"] = .string(email)
            body["localId"] = .string(uid.rawValue)
            body["verifiedProvider"] = .array(providers.map { .string($0.rawValue) })
        }
        return .object(body)
    }

    /// Who the credential speaks for: a `/__/auth/handler` response URL (its code exchanged
    /// with the provider), or in development the fake IdP's claims.
    private func identity(_ call: ToolkitCall) async throws -> FederatedIdentity {
        let requestUri = try call.fields.string("requestUri")
        let postBody = try call.fields.string("postBody")
        let uriQuery = Dictionary(
            FormEncoding.fields(requestUri.flatMap { URLComponents(string: $0)?.percentEncodedQuery } ?? "").map { ($0.name, $0.value) },
            uniquingKeysWith: { first, _ in first })
        if uriQuery["state"] != nil {
            let providerId = FormEncoding.fields(postBody ?? "").first { $0.name == "providerId" }.map { ProviderID($0.value) }
            return try await signIn.headfulIdentity(
                requestUri: uriQuery, sessionId: try call.fields.string("sessionId"), providerId: providerId,
                apiKey: call.apiKey, call.caller)
        }
        // A credential the app brought: checked with the provider when the project configured it.
        let post = Dictionary(FormEncoding.fields(postBody ?? "").map { ($0.name, $0.value) }) { first, _ in first }
        if let providerId = post["providerId"].map(ProviderID.init(rawValue:)),
            let identity = try await signIn.directIdentity(
                providerId, idToken: post["id_token"], accessToken: post["access_token"], rawNonce: post["nonce"], call.caller)
        {
            return identity
        }
        guard signIn.settings.fakeIdentityProvider else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((No identity provider is configured for this credential.))")
        }
        return try FakeIdentityProvider.identity(requestUri: requestUri, postBody: postBody)
    }
}
