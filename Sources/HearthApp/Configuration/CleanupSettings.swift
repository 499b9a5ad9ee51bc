/// The 30-day anonymous cleanup's pace (whether it runs is each project's `autodeleteAnonymousUsers`).
public struct CleanupSettings: Sendable, Equatable {
    public var batchSize = 1024

    public init() {}

    public struct Valid: Sendable, Equatable {
        public let batchSize: Int
    }

    func validated() throws -> Valid {
        try LimitsSettings.check("cleanupBatchSize", batchSize, 1...100_000)
        return Valid(batchSize: batchSize)
    }
}
