enum SchedulerTiming {
    /// How long (ms) a job that found its node not the cluster's leader waits to look again:
    /// the leader does the work meanwhile, and a node that becomes leader starts within this.
    static let followerRetry: Int64 = 5_000
}
