/// A count for one UTC day.
public struct DayCount: Equatable, Sendable {
    /// Days since 1970-01-01 (UTC).
    public var day: Int64
    public var accounts: Int

    public init(day: Int64, accounts: Int) {
        self.day = day
        self.accounts = accounts
    }

    public static let millisecondsPerDay: Int64 = 86_400_000
}

/// `hearth cleanup status`: whether cleanup runs for a project, what is scheduled and due, and
/// what it purged lately.
public struct CleanupStatus: Equatable, Sendable {
    public var project: ProjectID
    public var enabled: Bool
    public var periodSeconds: Int64
    public var scheduled: Int
    public var dueNow: Int
    public var nextDueAt: Int64?
    /// The last 30 days (today included), days without purges left out.
    public var purgedByDay: [DayCount]

    public init(
        project: ProjectID, enabled: Bool, periodSeconds: Int64, scheduled: Int, dueNow: Int, nextDueAt: Int64?,
        purgedByDay: [DayCount]
    ) {
        self.project = project
        self.enabled = enabled
        self.periodSeconds = periodSeconds
        self.scheduled = scheduled
        self.dueNow = dueNow
        self.nextDueAt = nextDueAt
        self.purgedByDay = purgedByDay
    }

    public var purgedLast30Days: Int { purgedByDay.reduce(0) { $0 + $1.accounts } }
}

/// `hearth cleanup preview`: what turning cleanup on now would do.
public struct CleanupPreview: Equatable, Sendable {
    public var project: ProjectID
    public var enabled: Bool
    public var periodSeconds: Int64
    /// Anonymous accounts not yet scheduled: turning cleanup on schedules them a period from now.
    public var wouldSchedule: Int
    /// Accounts already scheduled (cleanup was on before, or is on): they keep their dates.
    public var alreadyScheduled: Int
    /// When they would all go, by day.
    public var dueByDay: [DayCount]

    public init(
        project: ProjectID, enabled: Bool, periodSeconds: Int64, wouldSchedule: Int, alreadyScheduled: Int,
        dueByDay: [DayCount]
    ) {
        self.project = project
        self.enabled = enabled
        self.periodSeconds = periodSeconds
        self.wouldSchedule = wouldSchedule
        self.alreadyScheduled = alreadyScheduled
        self.dueByDay = dueByDay
    }
}
