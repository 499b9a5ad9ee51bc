import Foundation

/// The last `audit verify`'s result, kept beside the data (`audit-verification.json`) so the
/// console can say when the chain was last walked and what that found.
public struct AuditVerificationRecord: Codable, Equatable, Sendable {
    /// Unix milliseconds.
    public var verifiedAt: Int64
    public var intact: Bool
    public var eventsChecked: UInt64
    /// The last good event's hash (hex).
    public var headHash: String
    public var failedAt: UInt64?
    public var failure: String?

    public init(_ verification: StoreAudit.Verification, at time: Int64) {
        verifiedAt = time
        intact = verification.isIntact
        eventsChecked = verification.eventsChecked
        headHash = verification.headHash
        failedAt = verification.failure?.sequence
        failure = verification.failure?.reason
    }
}

extension StoreAudit {
    /// Keeps a verification's result for `lastVerification` (replacing the one before, whole).
    public func record(_ verification: Verification, at time: Int64) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = try encoder.encode(AuditVerificationRecord(verification, at: time))
        try DurableFiles.writeAtomically(Array(bytes), to: store.directory.auditVerificationFile)
    }

    /// The last recorded verification, if any (an unreadable record counts as none).
    public func lastVerification() -> AuditVerificationRecord? {
        guard let data = FileManager.default.contents(atPath: store.directory.auditVerificationFile) else { return nil }
        return try? JSONDecoder().decode(AuditVerificationRecord.self, from: data)
    }
}
