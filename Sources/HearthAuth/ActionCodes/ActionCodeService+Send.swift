import Foundation
import HearthDomain
import HearthStore
import HearthWire

/// Emailed action codes (`accounts:sendOobCode`): sign-in links, password resets, email
/// verification and verify-before-change. The ledger keeps each code's hash; the plain code
/// travels only in the delivered link.
extension ActionCodeService {
    public struct ActionLinkRequest: Sendable {
        public var requestType: OOBCodeIssued.RequestType
        public var email: String?
        /// VERIFY_AND_CHANGE_EMAIL: the address the account moves to once the code is applied.
        public var newEmail: String?
        /// The signed-in user a verification is for (client SDKs).
        public var idToken: String?
        /// Admin link generation (`returnOobLink`): verifications then name the user by email.
        public var returnsLink: Bool
        public var continueUrl: String?
        /// The rest of the app's ActionCodeSettings (production checks and shapes links by them).
        public var app = AppLinkSettings()
        public var origin: LinkOrigin

        public init(
            requestType: OOBCodeIssued.RequestType, email: String?, newEmail: String? = nil, idToken: String? = nil,
            returnsLink: Bool = false, continueUrl: String?, origin: LinkOrigin
        ) {
            self.requestType = requestType
            self.email = email
            self.newEmail = newEmail
            self.idToken = idToken
            self.returnsLink = returnsLink
            self.continueUrl = continueUrl
            self.origin = origin
        }
    }

    /// Whom a code is for, as the request names them (checked again inside the transaction).
    private struct Recipient {
        var email: String
        var uid: UserID?
        var newEmail: String?
    }

    /// What `sendActionCode` answers: the address, and the link unless email enumeration
    /// protection withheld it (an unknown address to reset, a new address that is taken).
    public struct SentActionCode: Sendable {
        public var email: String
        public var link: ActionLink?
    }

    /// Refused under email enumeration protection: answered as if sent, nothing recorded or sent.
    private struct Withheld: Error {}

    /// Issues a code (its hash goes to the ledger) and delivers its link: by email when the
    /// client SDK asked for it, in the reply when an admin generated it, and to the development
    /// outbox always.
    public func sendActionCode(_ request: ActionLinkRequest, _ caller: Caller) async throws -> SentActionCode {
        let project = caller.project
        let handler = try actionHandler(request.origin)
        let mails = !request.returnsLink
        guard !mails || mailer != nil || outbox != nil else {
            throw FirebaseError.bad("CONFIGURATION_NOT_FOUND : email delivery is not configured (smtpHost)")
        }
        let config = try read { try $0.config(of: project) }
        // Production holds ActionCodeSettings to Firebase's rules; development to the emulator's.
        var linkDomain: String?
        if settings.strictActionCodeSettings {
            linkDomain = try request.app.check(request.continueUrl, for: request.requestType, config)
        } else {
            try checkContinueUrl(request.continueUrl, config, caller)
        }
        let recipient = try self.recipient(of: request, config, caller)
        // Apps learn nothing of which addresses are registered; admins still do.
        let withholds = config.improvedEmailPrivacy && !caller.isAdmin
        // Counted whether or not the address is known, so the limit says nothing about it.
        if mails { try limits?.admitEmail(to: recipient.newEmail ?? recipient.email, caller, now: now) }
        let delivery = mails ? try reserveEmail() : nil
        let code = AuthContext.newActionCode()
        let type = request.requestType
        let lifetime = settings.codeLifetime(type)
        var link = actionLink(
            code, type, project, email: recipient.email, newEmail: recipient.newEmail, handler: handler,
            apiKey: request.origin.apiKey, continueUrl: request.continueUrl)
        if settings.strictActionCodeSettings { link.oobLink = request.app.shape(link.oobLink, domain: linkDomain) }
        let issuedLink = link
        let issueAndDeliver = { @Sendable [self] in
            try await issue(code, to: recipient, type, lifetime: lifetime, withholds: withholds, caller)
            outbox?.deliver(issuedLink)
            delivery?.send(issuedLink)
        }
        if withholds && type.dependsOnRegistration {
            // Whether a code is recorded (a durable write, an fsync) depends on whether the
            // address is registered: answered before that write, so how long the answer takes
            // says nothing either. The answer acknowledges no change; the email follows the commit.
            let report = settings.onUnrecordedActionCode
            Task {
                do {
                    try await issueAndDeliver()
                } catch is Withheld {
                    // An unknown address, a taken one: nothing recorded or sent, as answered.
                } catch {
                    report?(project, caller.requestId, error)
                }
            }
            return SentActionCode(email: recipient.email, link: nil)
        }
        do {
            try await issueAndDeliver()
        } catch is Withheld {
            return SentActionCode(email: recipient.email, link: nil)
        }
        return SentActionCode(email: recipient.email, link: link)
    }

    private func issue(
        _ code: String, to recipient: Recipient, _ type: OOBCodeIssued.RequestType, lifetime: Int64, withholds: Bool, _ caller: Caller
    ) async throws {
        let project = caller.project
        try await write(caller, uid: recipient.uid) { tx in
            var issued = OOBCodeIssued(
                requestType: type, email: recipient.email, newEmail: recipient.newEmail, expiresAt: tx.now + lifetime)
            let owner = try tx.owner(ofEmail: issued.email, in: project)
            switch type {
            case .emailSignIn:
                // The link may create the account; it signs in whoever owns the email by then.
                issued.uid = owner
            case .passwordReset:
                guard let owner else { throw withholds ? Withheld() : FirebaseError.emailNotFound }
                issued.uid = owner
            case .verifyEmail, .verifyAndChangeEmail, .recoverEmail:
                guard let owner, recipient.uid == nil || owner == recipient.uid else { throw FirebaseError.userNotFound }
                issued.uid = owner
            }
            if let newEmail = issued.newEmail, try tx.owner(ofEmail: newEmail, in: project) != nil {
                throw withholds ? Withheld() : FirebaseError(AuthError.emailExists)
            }
            try tx.execute(.issueOOBCode(project, codeHash: AuthContext.codeHash(code), issued))
        }
    }

    private func checkContinueUrl(_ continueUrl: String?, _ config: ProjectConfig, _ caller: Caller) throws {
        guard let continueUrl else { return }
        let host = try Validation.continueURL(continueUrl).host ?? ""
        // Admins generate links for any domain; apps only for the project's own.
        guard caller.isAdmin || config.authorizes(host: host) else {
            throw FirebaseError.bad("UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
        }
    }

    /// The emulator's rules for who a code is for, in its order of checks.
    private func recipient(of request: ActionLinkRequest, _ config: ProjectConfig, _ caller: Caller) throws -> Recipient {
        func requiredEmail() throws -> String {
            guard let email = request.email, !email.isEmpty else { throw FirebaseError.missingEmail }
            return normalizeEmail(email)
        }
        switch request.requestType {
        case .recoverEmail:
            // Sent by Hearth itself when an email changes, to the address it replaced.
            throw FirebaseError.bad("OPERATION_NOT_ALLOWED : RECOVER_EMAIL codes are sent only when an email changes")
        case .emailSignIn:
            guard config.allowsEmailLinkSignIn else { throw FirebaseError(AuthError.operationNotAllowed) }
            return Recipient(email: try requiredEmail())
        case .passwordReset:
            return Recipient(email: try requiredEmail())
        case .verifyEmail, .verifyAndChangeEmail:
            var newEmail: String?
            if request.requestType == .verifyAndChangeEmail {
                guard let requested = request.newEmail, !requested.isEmpty else { throw FirebaseError.bad("MISSING_NEW_EMAIL") }
                guard let valid = try? Validation.email(requested) else { throw FirebaseError.bad("INVALID_NEW_EMAIL") }
                newEmail = valid
            }
            // The Admin SDK's generate*Link names the user by email; apps send the user's ID token.
            if caller.isAdmin && request.returnsLink && request.idToken == nil {
                return Recipient(email: try requiredEmail(), newEmail: newEmail)
            }
            if request.requestType == .verifyAndChangeEmail && request.idToken == nil { throw FirebaseError.missingIdToken }
            guard let idToken = request.idToken, !idToken.isEmpty else { throw FirebaseError.invalidIdToken }
            let (account, session) = try authenticate(idToken, caller)
            if request.requestType == .verifyAndChangeEmail { try requireRecentSignIn(account, session) }
            guard let email = account.email else { throw FirebaseError.missingEmail }
            return Recipient(email: email, uid: account.uid, newEmail: newEmail)
        }
    }

}
