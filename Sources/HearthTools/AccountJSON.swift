import HearthDomain
import HearthStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `hearth audit show` output: the account as a JSON object, and the event it reflects.
public enum AccountJSON {
    private struct Snapshot: Encodable {
        let account: Account
        let asOfSequence: UInt64
        let asOf: String
    }

    public static func render(_ account: Account, through event: StoredEvent) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let snapshot = Snapshot(
            account: account, asOfSequence: event.sequence, asOf: Timestamp.iso8601(milliseconds: event.recordedAt))
        return String(decoding: try encoder.encode(snapshot), as: UTF8.self)
    }
}
