/// Which recorded data is personal. The ledger seals it under a key of the stream's own,
/// made with the stream's first sealed event (an account's creation), and an event that ends
/// the stream's subject destroys the key in the same write: forgetting is destroying a key.
/// What is not personal stays readable forever: streams, sequence numbers, event types, times,
/// actors, creation methods, reasons, provider ids, flags.
public enum PersonalData {
    /// The stream whose key seals `payload`'s personal data on `stream`: an account's own; an
    /// action code's account when the code names one (deleting the account forgets its pending
    /// codes' addresses too), else the code's own. Project streams record operators' settings,
    /// not anyone's account.
    public static func keyOwner(of stream: StreamID, _ payload: EventPayload) -> StreamID? {
        switch keyOwnership(of: stream, payload) {
        case .unkeyed: nil
        case .own: stream
        case .account(let owner): owner
        }
    }

    /// `keyOwner`, without naming the stream again when the key is its own (the ledger asks
    /// for every record it writes).
    public enum KeyOwnership: Sendable {
        /// Nothing on the stream is personal (a project's or the cluster's).
        case unkeyed
        /// The stream's own key.
        case own
        /// An account's key, for an action code that names the account.
        case account(StreamID)

        public var isKeyed: Bool {
            if case .unkeyed = self { false } else { true }
        }
    }

    public static func keyOwnership(of stream: StreamID, _ payload: EventPayload) -> KeyOwnership {
        switch stream {
        case .account: .own
        case .oobCode(let project, _):
            if case .oobCodeIssued(let issued) = payload, let uid = issued.uid { .account(.account(project, uid)) } else { .own }
        case .project, .cluster: .unkeyed
        }
    }

    /// Whether recording `payload` destroys its stream's own key, in the same transaction: the
    /// account ends (deleted, purged, erased), or a code is used up or expires unused (a code sealed under its
    /// account's key has none of its own: the account's end forgets it). Such an event carries
    /// no personal data of its own, not even its client address.
    public static func forgets(_ payload: EventPayload) -> Bool {
        switch payload {
        case .accountDeleted, .anonymousPurged, .accountErased, .oobCodeConsumed, .oobCodeExpired: true
        default: false
        }
    }

    /// `forgets`, from the event's type alone (every version of it): what a follower appending
    /// its leader's records knows without opening them. An event that forgets seals nothing,
    /// so the key it destroys is its own stream's (`keyOwner`).
    public static func forgets(_ type: EventType) -> Bool {
        forgettingTypeNames.contains(type.name)
    }

    private static let forgettingTypeNames: Set<String> = [
        EventType.accountDeleted.name, EventType.anonymousPurged.name, EventType.accountErased.name,
        EventType.oobCodeConsumed.name, EventType.oobCodeExpired.name,
    ]

    /// The payload fields an event of `type` seals, as paths into its JSON form (`schemas/`
    /// marks the same fields `"x-personal": true`). The envelope's client address is sealed
    /// with them on every account and code stream.
    public static func fields(of type: EventType) -> [String] {
        switch type {
        case .accountCreated:
            ["email", "password", "displayName", "photoUrl", "phoneNumber", "providers", "customClaims"]
        case .providerLinked:
            ["provider.federatedId", "provider.email", "provider.displayName", "provider.photoUrl", "provider.screenName"]
        case .passwordSet: ["password"]
        case .emailVerified, .emailChanged: ["email"]
        case .profileUpdated: ["displayName", "photoUrl", "phoneNumber"]
        case .customClaimsSet: ["claims"]
        case .oobCodeIssued: ["email", "newEmail"]
        // The secret is sealed too; the JSON form never shows it, erased or not.
        case .secondFactorEnrolled: ["displayName", "phoneNumber"]
        default: []
        }
    }

    /// The metadata field sealed with them.
    public static let metadataField = "metadata.clientIp"

    /// The account's fields that hold personal data, as `erasing` empties them.
    public static let accountFields = [
        "email", "initialEmail", "password", "displayName", "photoUrl", "phoneNumber", "providers", "customClaims",
        "secondFactors",
    ]

    /// `account` as its history shows once forgotten: the personal fields (`accountFields`)
    /// empty, so nothing shows what an erased event decoded to.
    public static func erasing(_ account: Account) -> Account {
        var erased = account
        erased.email = nil
        erased.initialEmail = nil
        erased.password = nil
        erased.displayName = nil
        erased.photoUrl = nil
        erased.phoneNumber = nil
        erased.providers = []
        erased.customClaims = nil
        erased.secondFactors = []
        return erased
    }
}
