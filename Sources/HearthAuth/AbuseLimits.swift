import HearthDomain

/// How much an unauthenticated client may do, per project: Firebase's published quotas where
/// it has them (100 sign-ups an hour per IP address), and backoff on password guessing. Counted
/// in memory (a restart forgets them: at worst it hands a guesser a fresh allowance, never
/// locks anyone out for good), in tables of bounded size. Admin calls are never limited.
public struct AbuseLimits: Sendable, Equatable {
    /// New accounts (`signUp`, anonymous or with a password) per client address per hour.
    public var signUpsPerAddressPerHour = 100
    /// Wrong passwords for one email before each further attempt must wait: 1 s, then doubling
    /// up to `passwordBackoffMaxSeconds`. A correct password, or a password reset, clears it.
    public var passwordFailuresPerAccount = 5
    /// Wrong passwords from one client address (any email) before its attempts must wait.
    public var passwordFailuresPerAddress = 25
    public var passwordBackoffMaxSeconds = 900
    /// Action-code emails (reset, verification, sign-in link) per recipient per hour.
    public var emailsPerRecipientPerHour = 5
    /// Action-code emails requested by one client address per hour.
    public var emailsPerAddressPerHour = 25
    /// Headful sign-ins (`/__/auth/handler` starts) from one client address per hour: each
    /// holds memory for ten minutes, so a flood from one address must not crowd out others'.
    public var headfulSignInsPerAddressPerHour = 100

    public init() {}

    /// The limits by their config-file names.
    public static var fields: [(name: String, keyPath: WritableKeyPath<AbuseLimits, Int>, range: ClosedRange<Int>)] {
        [
            ("signUpsPerAddressPerHour", \.signUpsPerAddressPerHour, 1...1_000_000),
            ("passwordFailuresPerAccount", \.passwordFailuresPerAccount, 1...1000),
            ("passwordFailuresPerAddress", \.passwordFailuresPerAddress, 1...100_000),
            ("passwordBackoffMaxSeconds", \.passwordBackoffMaxSeconds, 1...86_400),
            ("emailsPerRecipientPerHour", \.emailsPerRecipientPerHour, 1...10_000),
            ("emailsPerAddressPerHour", \.emailsPerAddressPerHour, 1...1_000_000),
            ("headfulSignInsPerAddressPerHour", \.headfulSignInsPerAddressPerHour, 1...1_000_000),
        ]
    }
}

/// The limits in force: one set for every project, and any project's own.
public struct AbuseLimitPolicy: Sendable, Equatable {
    public var defaults: AbuseLimits
    public var projects: [ProjectID: AbuseLimits]
    /// Jobs one client address may have waiting for the password-hashing pool (the rest are
    /// refused at once), so one address can not fill the queue in front of everyone else.
    public var hashQueuePerAddress: Int

    public init(defaults: AbuseLimits = AbuseLimits(), projects: [ProjectID: AbuseLimits] = [:], hashQueuePerAddress: Int = 8) {
        self.defaults = defaults
        self.projects = projects
        self.hashQueuePerAddress = hashQueuePerAddress
    }

    public func limits(for project: ProjectID) -> AbuseLimits {
        projects[project] ?? defaults
    }
}
