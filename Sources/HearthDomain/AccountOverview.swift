/// A project's accounts at a glance (the console's overview): how many, by provider, and the
/// sign-ups and sign-ins of recent days. Kept as counts by the projections, never counted.
public struct AccountOverview: Equatable, Sendable {
    public var accounts: Int
    /// Accounts that sign in with each provider (`password`, `phone`, `anonymous`, or a
    /// provider id), the most used first.
    public var byProvider: [ProviderCount]
    /// Days with sign-ups or sign-ins, oldest first (days without either left out).
    public var activity: [DailyActivity]

    public init(accounts: Int, byProvider: [ProviderCount], activity: [DailyActivity]) {
        self.accounts = accounts
        self.byProvider = byProvider
        self.activity = activity
    }
}

public struct ProviderCount: Equatable, Sendable {
    public var provider: String
    public var accounts: Int

    public init(provider: String, accounts: Int) {
        self.provider = provider
        self.accounts = accounts
    }
}

public struct DailyActivity: Equatable, Sendable {
    /// Days since 1970-01-01 (UTC).
    public var day: Int64
    public var signUps: Int
    public var signIns: Int

    public init(day: Int64, signUps: Int, signIns: Int) {
        self.day = day
        self.signUps = signUps
        self.signIns = signIns
    }
}
