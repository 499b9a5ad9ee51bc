import Foundation
import HearthCrypto
import HearthDomain
import HearthWire

/// A federated identity as an identity provider asserted it: who (provider + subject) and the
/// profile it shares.
public struct FederatedIdentity: Sendable, Equatable {
    public var providerId: ProviderID
    /// The user's id at the provider (`sub`): `rawId` / `federatedId` on the wire.
    public var subject: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var photoUrl: String?
    public var screenName: String?
    /// The provider's profile as received (`rawUserInfo`).
    public var rawUserInfo: JSONValue
    public var idToken: String?
    public var accessToken: String?

    /// A claim such as `email_verified`: JSON true, or the string "true" (some providers).
    public static func isTrue(_ claim: JSONValue?) -> Bool {
        switch claim {
        case .bool(let flag)?: flag
        case .string(let text)?: text == "true"
        default: false
        }
    }

    /// The identity within the sizes Hearth stores (its ids and email are index keys): what a
    /// provider sends beyond them is refused, whichever provider it is.
    public func checkedSizes() throws -> FederatedIdentity {
        let limits: [(String?, Int, String)] = [
            (subject, Validation.MaxBytes.federatedId, "subject"), (email, Validation.MaxBytes.email, "email"),
            (displayName, Validation.MaxBytes.displayName, "name"), (photoUrl, Validation.MaxBytes.photoUrl, "picture"),
            (screenName, Validation.MaxBytes.screenName, "screen name"),
        ]
        for (value, maxBytes, name) in limits where (value?.utf8.count ?? 0) > maxBytes {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((The provider's \(name) is longer than \(maxBytes) bytes.))")
        }
        guard !subject.isEmpty else { throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((The provider named no user.))") }
        return self
    }

    public init(
        providerId: ProviderID, subject: String, email: String?, emailVerified: Bool, displayName: String?,
        photoUrl: String?, screenName: String?, rawUserInfo: JSONValue, idToken: String?, accessToken: String?
    ) {
        self.providerId = providerId
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoUrl = photoUrl
        self.screenName = screenName
        self.rawUserInfo = rawUserInfo
        self.idToken = idToken
        self.accessToken = accessToken
    }
}

/// The Auth Emulator's fake identity provider (development profile only): the credential is a
/// `providerId` and an `id_token` holding the claims as plain JSON or an unverified JWT.
public enum FakeIdentityProvider {
    /// Reads the credential from `postBody` merged over `requestUri`'s query (emulator 2.7).
    public static func identity(requestUri: String?, postBody: String?) throws -> FederatedIdentity {
        guard let requestUri, !requestUri.isEmpty else { throw FirebaseError.bad("MISSING_REQUEST_URI") }
        guard let uri = URLComponents(string: requestUri), uri.scheme != nil, uri.host != nil else {
            throw FirebaseError.bad("INVALID_REQUEST_URI")
        }
        var params: [String: String] = [:]
        for (name, value) in FormEncoding.fields(uri.percentEncodedQuery ?? "") { params[name] = value }
        for (name, value) in FormEncoding.fields(postBody ?? "") { params[name] = value }
        if let fragment = uri.fragment {
            for (name, value) in FormEncoding.fields(fragment) where params[name] == nil { params[name] = value }
        }
        guard let providerId = params["providerId"]?.lowercased(), !providerId.isEmpty,
            providerId.utf8.count <= Validation.MaxBytes.providerId
        else {
            throw FirebaseError.bad("INVALID_CREDENTIAL_OR_PROVIDER_ID : Invalid IdP response/credential: \(requestUri)")
        }
        let idToken = params["id_token"]
        let accessToken = params["access_token"]
        guard let token = idToken ?? accessToken else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((Hearth's fake IdP needs an id_token with JSON claims.))")
        }
        guard let claims = self.claims(token) else {
            throw FirebaseError.bad(
                "INVALID_IDP_RESPONSE : Unable to parse id_token: \(token) ((Only strict JSON or JWTs are accepted as fake id_tokens.))"
            )
        }
        guard let sub = claims["sub"] else {
            throw FirebaseError.bad(
                "INVALID_IDP_RESPONSE : Invalid Idp Response: id_token missing required fields. ((Missing \"sub\" field. This field is required and must be a unique identifier.))"
            )
        }
        guard let subject = sub.stringValue, !subject.isEmpty, subject.utf8.count <= Validation.MaxBytes.federatedId else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((The \"sub\" field must be a string of at most 256 bytes.))")
        }
        func profile(_ claim: String, _ maxBytes: Int) throws -> String? {
            guard let value = claims[claim]?.stringValue else { return nil }
            guard value.utf8.count <= maxBytes else {
                throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((The \"\(claim)\" claim is longer than \(maxBytes) bytes.))")
            }
            return value
        }
        var email = try profile("email", Validation.MaxBytes.email)?.lowercased()
        var rawUserInfo = JSONValue.object(claims)
        // A SAML provider's response, in the emulator's JSON shape: its subject's nameId is the
        // email when it looks like one, and its attribute statements are the raw user info.
        let isSAML = providerId.hasPrefix("saml.")
        if let response = params["SAMLResponse"], !response.isEmpty {
            let assertion = try samlAssertion(response)
            if isSAML {
                if let nameId = assertion["subject"]?["nameId"]?.stringValue, (try? Validation.email(nameId)) != nil {
                    email = nameId.lowercased()
                }
                rawUserInfo = assertion["attributeStatements"] ?? .null
            }
        }
        return FederatedIdentity(
            providerId: ProviderID(providerId), subject: subject, email: email,
            emailVerified: isSAML || FederatedIdentity.isTrue(claims["email_verified"]),
            displayName: try profile("name", Validation.MaxBytes.displayName),
            photoUrl: try profile("picture", Validation.MaxBytes.photoUrl),
            screenName: try profile("screen_name", Validation.MaxBytes.screenName), rawUserInfo: rawUserInfo,
            idToken: idToken, accessToken: accessToken)
    }

    /// The assertion of a SAMLResponse (JSON), checked as the emulator checks it: an assertion,
    /// with a subject, with a nameId.
    private static func samlAssertion(_ response: String) throws -> JSONValue {
        guard let parsed = JSONValue.parse(Array(response.utf8)), parsed.objectValue != nil else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE : ((SAMLResponse is not a JSON object.))")
        }
        guard let assertion = parsed["assertion"], assertion.objectValue != nil else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE ((Missing assertion in SAMLResponse.))")
        }
        guard let subject = assertion["subject"], subject.objectValue != nil else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE ((Missing assertion.subject in SAMLResponse.))")
        }
        guard let nameId = subject["nameId"]?.stringValue, !nameId.isEmpty else {
            throw FirebaseError.bad("INVALID_IDP_RESPONSE ((Missing assertion.subject.nameId in SAMLResponse.))")
        }
        return assertion
    }

    /// The claims the fake IdP's sign-in page asserts, as the emulator's page builds them: the
    /// chosen account's id at the provider, or 40 random digits for a new one. JSON text, the
    /// `id_token` of the response URL.
    public static func assertedClaims(subject: String?, profile: [String: String]) -> String {
        var claims: [String: JSONValue] = [
            "sub": .string(subject.flatMap { $0.isEmpty ? nil : $0 } ?? SecureRandom.string(40, from: Array("0123456789".utf8))),
            "iss": "", "aud": "", "exp": 0, "iat": 0, "email_verified": true,
        ]
        for field in ["email", "name", "screen_name", "picture"] {
            if let value = profile[field], !value.isEmpty { claims[field] = .string(value) }
        }
        return String(decoding: JSONValue.object(claims).encoded(), as: UTF8.self)
    }

    private static func claims(_ token: String) -> [String: JSONValue]? {
        if token.hasPrefix("{") { return JSONValue.parse(Array(token.utf8))?.objectValue }
        return JWT.decode(token)?.payload
    }
}
