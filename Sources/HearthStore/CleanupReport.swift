import HearthDomain
import HearthProjections

/// The numbers of `hearth cleanup status` and `preview`, from the schedule and purge counts.
extension StoreReader {
    public func cleanupStatus(of project: ProjectID, now: Int64) throws -> CleanupStatus {
        let config = try config(of: project)
        var scheduled = 0
        var dueNow = 0
        var nextDueAt: Int64?
        try forEachScheduledForCleanup(in: project) { dueAt, _ in
            scheduled += 1
            if dueAt <= now { dueNow += 1 }
            nextDueAt = nextDueAt ?? dueAt
            return true
        }
        let today = now / DayCount.millisecondsPerDay
        let purged = try projectionReader.purgesByDay(in: project, from: today - 29).map { DayCount(day: $0.day, accounts: $0.purged) }
        return CleanupStatus(
            project: project, enabled: config.anonymousCleanup, periodSeconds: config.anonymousCleanupPeriodSeconds,
            scheduled: scheduled, dueNow: dueNow, nextDueAt: nextDueAt, purgedByDay: purged)
    }

    public func cleanupPreview(of project: ProjectID, now: Int64) throws -> CleanupPreview {
        let config = try config(of: project)
        var byDay: [Int64: Int] = [:]
        var alreadyScheduled = 0
        try forEachScheduledForCleanup(in: project) { dueAt, _ in
            alreadyScheduled += 1
            byDay[dueAt / DayCount.millisecondsPerDay, default: 0] += 1
            return true
        }
        let wouldSchedule = config.anonymousCleanup ? 0 : try unscheduledAnonymousAccounts(in: project)
        if wouldSchedule > 0 { byDay[(now + config.anonymousCleanupDelay) / DayCount.millisecondsPerDay, default: 0] += wouldSchedule }
        return CleanupPreview(
            project: project, enabled: config.anonymousCleanup, periodSeconds: config.anonymousCleanupPeriodSeconds,
            wouldSchedule: wouldSchedule, alreadyScheduled: alreadyScheduled,
            dueByDay: byDay.keys.sorted().map { DayCount(day: $0, accounts: byDay[$0]!) })
    }
}
