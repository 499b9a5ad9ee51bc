import HearthDomain

/// An emailed action code and the link that carries it. The ledger holds only the code's
/// hash; this value is the one place the plain code lives, on its way to the recipient.
public struct ActionLink: Sendable, Equatable {
    public var project: ProjectID
    public var email: String
    public var newEmail: String?
    public var requestType: OOBCodeIssued.RequestType
    public var oobCode: String
    public var oobLink: String

    public init(
        project: ProjectID, email: String, newEmail: String?, requestType: OOBCodeIssued.RequestType, oobCode: String,
        oobLink: String
    ) {
        self.project = project
        self.email = email
        self.newEmail = newEmail
        self.requestType = requestType
        self.oobCode = oobCode
        self.oobLink = oobLink
    }

    /// Who receives the email: a verify-and-change goes to the new address, which it proves;
    /// a recovery to the old one, which it restores.
    public var recipient: String { requestType == .verifyAndChangeEmail ? newEmail ?? email : email }
}

/// Delivers action links by email. It must not block: the request that issued the code
/// returns once the link is handed over.
public protocol ActionLinkMailer: Sendable {
    /// Holds room for one email before its code is written, so that a full queue refuses the
    /// request rather than recording a code, or an email change, whose email cannot go out.
    func reserve() throws -> any ActionLinkDelivery
}

/// Room held for one email: `send` uses it; dropping it unused gives the room back.
public protocol ActionLinkDelivery: Sendable {
    func send(_ link: ActionLink)
}
