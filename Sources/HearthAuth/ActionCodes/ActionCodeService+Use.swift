import HearthDomain
import HearthStore

/// Using an emailed code: inspecting it or resetting a password with it (`accounts:resetPassword`),
/// applying a verification (`accounts:update {oobCode}`). Each use consumes the code and changes
/// the account in one transaction.
extension ActionCodeService {
    public struct ActionCodeInfo: Sendable, Equatable {
        public var requestType: OOBCodeIssued.RequestType
        public var email: String
        public var newEmail: String?

        init(_ code: OOBCode) {
            requestType = code.requestType
            email = code.email
            newEmail = code.newEmail
        }
    }

    /// A code that can still be used, with its hash (the code's stream).
    private func pendingCode(_ oobCode: String?, _ caller: Caller) throws -> (hash: String, code: OOBCode) {
        guard let oobCode, !oobCode.isEmpty else { throw FirebaseError.missingOobCode }
        let hash = AuthContext.codeHash(oobCode)
        guard let code = try read({ try $0.oobCode(hash, in: caller.project) }), !code.consumed else {
            throw FirebaseError.invalidOobCode
        }
        guard code.expiresAt > now else { throw FirebaseError(AuthError.expiredOobCode) }
        return (hash, code)
    }

    /// Without `newPassword`: what the code is for, changing nothing (checkActionCode,
    /// verifyPasswordResetCode). With it: a PASSWORD_RESET code sets the password
    /// (confirmPasswordReset), verifies the email and ends every earlier session.
    public func resetPassword(oobCode: String?, newPassword: String?, _ caller: Caller) async throws -> ActionCodeInfo {
        let project = caller.project
        guard try read({ try $0.config(of: project) }).emailPasswordEnabled else {
            throw FirebaseError.bad("PASSWORD_LOGIN_DISABLED")
        }
        let (hash, code) = try pendingCode(oobCode, caller)
        let info = ActionCodeInfo(code)
        guard let newPassword, !newPassword.isEmpty else { return info }
        guard code.requestType == .passwordReset, let uid = code.uid else { throw FirebaseError.invalidOobCode }
        let chosen = try Validation.password(newPassword)
        try checkPasswordPolicy(chosen, caller)
        let password = try await self.hash(chosen, for: caller)
        try await write(caller, uid: uid) { tx in
            try tx.execute(.consumeOOBCode(project, codeHash: hash))
            try tx.execute(.resetPassword(project, uid, password, email: code.email, codeIssuedAt: code.issuedAt))
        }
        // The owner proved the address: a guesser's backoff on the account no longer applies.
        limits?.passwordProven(email: code.email, project: project)
        return info
    }

    /// Applies a VERIFY_EMAIL, VERIFY_AND_CHANGE_EMAIL or RECOVER_EMAIL code (applyActionCode).
    /// Other codes are used elsewhere and stay unconsumed. A verified change of email notifies
    /// the address it replaces with a RECOVER_EMAIL link (built from `origin`), as any change does.
    public func applyActionCode(_ oobCode: String?, _ caller: Caller, origin: LinkOrigin? = nil) async throws
        -> (Account, ActionCodeInfo)
    {
        let project = caller.project
        let (hash, code) = try pendingCode(oobCode, caller)
        guard let uid = code.uid else { throw FirebaseError.invalidOobCode }
        // The address the account must still have, and the one it moves to (if any).
        let (holding, movingTo): (String, String?)
        switch code.requestType {
        case .verifyEmail, .verifyAndChangeEmail: (holding, movingTo) = (code.email, code.newEmail)
        case .recoverEmail:
            guard let changedTo = code.newEmail else { throw FirebaseError.invalidOobCode }
            (holding, movingTo) = (changedTo, code.email)
        case .passwordReset, .emailSignIn: throw FirebaseError.invalidOobCode
        }
        let recovery =
            if code.requestType == .verifyAndChangeEmail, let origin { try prepareEmailRecovery(from: holding, origin: origin) } else {
                EmailRecovery?.none
            }
        let (account, replaced) = try await write(caller, uid: uid) { tx in
            try tx.execute(.consumeOOBCode(project, codeHash: hash))
            try tx.execute(.applyEmailCode(project, uid, email: holding, newEmail: movingTo))
            let replaced = try recovery?.issue(for: uid, project, replacing: holding, in: tx)
            return (try tx.account(uid, project), replaced)
        }
        if let recovery, let replaced { deliver(recovery, replaced: replaced, by: account, project) }
        return (account, ActionCodeInfo(code))
    }
}
