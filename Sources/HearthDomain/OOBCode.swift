/// An email action code as the fold of its stream.
public struct OOBCode: Equatable, Sendable {
    public var requestType: OOBCodeIssued.RequestType
    public var email: String
    public var uid: UserID?
    public var newEmail: String?
    public var issuedAt: Int64
    public var expiresAt: Int64
    public var consumed = false

    /// Used or expired and swept: its addresses are forgotten (empty).
    public var isForgotten: Bool { email.isEmpty }

    public init(_ issued: OOBCodeIssued, issuedAt: Int64) {
        requestType = issued.requestType
        email = issued.email
        uid = issued.uid
        newEmail = issued.newEmail
        self.issuedAt = issuedAt
        expiresAt = issued.expiresAt
    }
}
