import HearthDomain
import HearthStore

/// The RECOVER_EMAIL notice an email change sends to the address it replaces, as Firebase does:
/// prepared before the write (code, link target, room on the mail queue), recorded inside it
/// when the email did change, delivered after the commit.
struct EmailRecovery: Sendable {
    let code: String
    let handler: String
    let origin: LinkOrigin
    let lifetime: Int64
    /// Room on the mail queue, when email is delivered; without room there is no change.
    let delivery: (any ActionLinkDelivery)?

    /// Inside the write, after the change: records the code if the account's email went from
    /// one address to another; returns the address it replaced.
    func issue(for uid: UserID, _ project: ProjectID, replacing before: String?, in tx: StoreTransaction) throws -> String? {
        guard let before, let after = try tx.account(uid, project).email, after != before else { return nil }
        let issued = OOBCodeIssued(
            requestType: .recoverEmail, email: before, uid: uid, newEmail: after, expiresAt: tx.now + lifetime)
        try tx.execute(.issueOOBCode(project, codeHash: AuthContext.codeHash(code), issued))
        return before
    }
}

extension AuthContext {
    /// What a change of the account's email from `current` needs to notify the old address;
    /// `nil` when there is none to notify, or no action handler to link to.
    func prepareEmailRecovery(from current: String?, origin: LinkOrigin) throws -> EmailRecovery? {
        guard current != nil, let handler = try? actionHandler(origin) else { return nil }
        return EmailRecovery(
            code: AuthContext.newActionCode(), handler: handler, origin: origin, lifetime: settings.codeLifetime(.recoverEmail),
            delivery: try reserveEmail())
    }

    /// After the commit: the link goes to the outbox (development) and the mail queue.
    func deliver(_ recovery: EmailRecovery, replaced: String, by account: Account, _ project: ProjectID) {
        let link = actionLink(
            recovery.code, .recoverEmail, project, email: replaced, newEmail: account.email, handler: recovery.handler,
            apiKey: recovery.origin.apiKey)
        outbox?.deliver(link)
        recovery.delivery?.send(link)
    }
}
