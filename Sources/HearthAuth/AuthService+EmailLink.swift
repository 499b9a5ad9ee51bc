import Crypto
import Foundation
import HearthDomain
import HearthProjections
import HearthStore

/// Email-link (passwordless) sign-in: seed 000.
extension AuthService {
    public struct ActionLinkRequest: Sendable {
        public var email: String
        public var continueUrl: String?
        /// Where action links point: this server's public base URL.
        public var baseURL: String
        public var apiKey: String

        public init(email: String, continueUrl: String?, baseURL: String, apiKey: String) {
            self.email = email
            self.continueUrl = continueUrl
            self.baseURL = baseURL
            self.apiKey = apiKey
        }
    }

    /// Issues an EMAIL_SIGNIN code (its hash goes to the ledger) and delivers the link.
    public func sendSignInLink(_ request: ActionLinkRequest, _ caller: Caller) async throws -> Outbox.Entry {
        guard !request.email.isEmpty else { throw FirebaseError.missingEmail }
        let email = normalizeEmail(request.email)
        let project = caller.project
        let config = try read { try $0.config(of: project) }
        guard config.emailPasswordEnabled && config.emailLinkEnabled else { throw FirebaseError(AuthError.operationNotAllowed) }
        if let continueUrl = request.continueUrl {
            guard let url = URL(string: continueUrl), let host = url.host, !host.isEmpty, url.scheme != nil else {
                throw FirebaseError.bad("INVALID_CONTINUE_URI : ((expected an absolute URI with valid scheme and host))")
            }
            // Admins generate links for any domain; apps only for the project's own.
            guard caller.isAdmin || config.authorizedDomains.contains(host.lowercased()) else {
                throw FirebaseError.bad("UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
            }
        }
        let code = Self.newActionCode()
        let lifetime = settings.oobCodeLifetime
        try await write(caller) { tx in
            let owner = try tx.state.owner(ofEmail: email, in: project)
            let issued = OOBCodeIssued(requestType: .emailSignIn, email: email, uid: owner, expiresAt: tx.now + lifetime)
            try tx.execute(.issueOOBCode(project, codeHash: Self.codeHash(code), issued))
        }
        var query = "mode=signIn&lang=en&oobCode=\(code)&apiKey=\(Self.percentEncoded(request.apiKey))"
        if let continueUrl = request.continueUrl { query += "&continueUrl=\(Self.percentEncoded(continueUrl))" }
        let entry = Outbox.Entry(
            project: project, email: email, newEmail: nil, requestType: .emailSignIn, oobCode: code,
            oobLink: request.baseURL + "/emulator/action?" + query)
        outbox.deliver(entry)
        return entry
    }

    /// Completes an email link: signs in (creating the account if needed), links the email to
    /// the `idToken`'s user, or reauthenticates. Proving the email removes an unverified password
    /// and revokes earlier sessions (seed 000 rule 4).
    public func signInWithEmailLink(email: String?, oobCode: String?, idToken: String?, _ caller: Caller) async throws
        -> SignInResult
    {
        let linking = try idToken.map { try authenticate($0, caller).0 }
        guard let email, !email.isEmpty else { throw FirebaseError.missingEmail }
        guard let oobCode, !oobCode.isEmpty else { throw FirebaseError.missingOobCode }
        let address = normalizeEmail(email)
        let project = caller.project
        let hash = Self.codeHash(oobCode)
        let code = try read { try $0.oobCode(hash, in: project) }
        guard let code, !code.consumed, code.requestType == .emailSignIn else { throw FirebaseError.invalidOobCode }
        guard code.email == address else {
            throw FirebaseError.bad("INVALID_EMAIL : The email provided does not match the sign-in email address.")
        }
        let newUid = Self.newUserID()
        let refresh = TokenIssuer.newRefreshToken(provider: "password")
        let (account, isNew) = try await write(caller, uid: linking?.uid) { tx in
            try tx.execute(.consumeOOBCode(project, codeHash: hash))
            let owner = try tx.state.owner(ofEmail: address, in: project)
            var uid = newUid
            if let linking {
                if let owner, owner != linking.uid { throw FirebaseError(AuthError.emailExists) }
                uid = linking.uid
            } else if let owner {
                uid = owner
            } else {
                let created = AccountCreated(method: .emailLink, createdAt: tx.now, email: address, emailVerified: true)
                try tx.execute(.createAccount(project, uid, created))
            }
            try tx.execute(.completeEmailLinkSignIn(project, uid, email: address, refreshTokenHash: refresh.hash))
            return (try tx.account(uid, project), uid == newUid)
        }
        return try signedIn(account, provider: "password", refresh: refresh, isNewUser: isNew, caller)
    }

    /// 32 random bytes, base64url: what the link carries. Only its hash is stored.
    static func newActionCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    static func codeHash(_ code: String) -> String {
        sha256Hex(code)
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
