import HearthCrypto

/// The cluster's shared credential (`replicationTokenFile`), as the nodes present it to each
/// other: `Authorization: Bearer <token>`, compared in constant time.
struct ReplicationCredential: Sendable {
    let token: String

    static let refusal = "the replication credential is missing or wrong"

    func accepts(_ authorization: String?) -> Bool {
        guard let presented = authorization, presented.hasPrefix("Bearer ") else { return false }
        return constantTimeEquals(Array(presented.utf8.dropFirst(7)), Array(token.utf8))
    }
}
