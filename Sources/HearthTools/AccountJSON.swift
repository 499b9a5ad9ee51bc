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
        /// The personal fields forgotten since (the account's key was destroyed), by name.
        let erased: [String]?
    }

    /// An account whose events were erased shows without its personal fields, and names them.
    public static func render(_ account: Account, through event: StoredEvent, isErased: Bool) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let snapshot = Snapshot(
            account: isErased ? PersonalData.erasing(account) : account, asOfSequence: event.sequence,
            asOf: Timestamp.iso8601(milliseconds: event.recordedAt), erased: isErased ? PersonalData.accountFields : nil)
        return String(decoding: try encoder.encode(snapshot), as: UTF8.self)
    }
}
