/// Firebase's request-level checks of an import batch (`accounts:batchCreate`): with
/// `sanityCheck`, no email twice (when one account per email) and no provider identity twice;
/// unless `allowOverwrite`, no uid twice. The first duplicate found refuses the whole batch.
public enum ImportBatch {
    public struct Entry: Sendable, Equatable {
        public var localId: String
        public var email: String?
        public var identities: [(providerId: String, rawId: String)]

        public init(localId: String, email: String?, identities: [(providerId: String, rawId: String)]) {
            self.localId = localId
            self.email = email
            self.identities = identities
        }

        public static func == (a: Entry, b: Entry) -> Bool {
            a.localId == b.localId && a.email == b.email && a.identities.elementsEqual(b.identities) { $0 == $1 }
        }
    }

    public enum Duplicate: Error, Equatable, Sendable {
        case email(String)
        case rawId(providerId: String, rawId: String)
        case localId(String)
    }

    public static func check(_ entries: [Entry], sanityCheck: Bool, overwrite: Bool, oneAccountPerEmail: Bool) throws(Duplicate) {
        if sanityCheck && oneAccountPerEmail {
            var emails: Set<String> = []
            for email in entries.compactMap(\.email) where !emails.insert(email).inserted { throw .email(email) }
        }
        if sanityCheck {
            var identities: Set<String> = []
            for entry in entries {
                for identity in entry.identities where !identities.insert(identity.providerId + "\u{0}" + identity.rawId).inserted {
                    throw .rawId(providerId: identity.providerId, rawId: identity.rawId)
                }
            }
        }
        if !overwrite {
            var localIds: Set<String> = []
            for entry in entries where !localIds.insert(entry.localId).inserted { throw .localId(entry.localId) }
        }
    }
}
