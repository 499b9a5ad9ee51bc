import HearthDomain
import HearthLedger
import HearthProjections
import HearthStore
import LMDB

/// `hearth audit …`: read-only views of the ledger, safe beside a running daemon.
public struct AuditTool {
    public struct Filter: Sendable {
        public var project: ProjectID
        public var uid: UserID?
        public var types: Set<String> = []
        public var since: Int64?
        public var until: Int64?

        public init(project: ProjectID, uid: UserID? = nil, types: Set<String> = [], since: Int64? = nil, until: Int64? = nil) {
            self.project = project
            self.uid = uid
            self.types = types
            self.since = since
            self.until = until
        }

        func matches(_ envelope: EventEnvelope) -> Bool {
            (types.isEmpty || types.contains(envelope.type.name))
                && (since.map { envelope.recordedAt >= $0 } ?? true)
                && (until.map { envelope.recordedAt <= $0 } ?? true)
        }
    }

    public enum Format: String, Sendable, CaseIterable {
        case json, text
    }

    public let store: AccountStore

    public init(store: AccountStore) { self.store = store }

    public struct ReplaySummary: Sendable, Equatable {
        /// Events printed (those the filter matched).
        public var printed: UInt64 = 0
        /// Events read to find them.
        public var scanned: UInt64 = 0
    }

    /// Prints matching events, one per line. A whole-ledger replay reports
    /// `progress(scanned, total)` after each batch, total being the events between `--since`
    /// and `--until` (both found by binary search).
    @discardableResult
    public func replay(
        _ filter: Filter, format: Format, to output: Output, progress: (_ scanned: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) throws -> ReplaySummary {
        var summary = ReplaySummary()
        let emit = { (envelope: EventEnvelope) throws in
            summary.scanned += 1
            guard filter.matches(envelope) else { return }
            output.line(format == .json ? try EventJSON.line(envelope) : Self.text(envelope))
            summary.printed += 1
        }
        if let uid = filter.uid {
            // One account: the stream index gives its events directly, whatever the ledger's size.
            for envelope in try events(of: uid, in: filter.project) { try emit(envelope) }
        } else {
            try replayAll(filter, emit, progress: progress)
        }
        output.flush()
        return summary
    }

    /// The whole ledger in bounded read transactions, starting at `--since` by binary search.
    private func replayAll(
        _ filter: Filter, _ emit: (EventEnvelope) throws -> Void, progress: (UInt64, UInt64) -> Void
    ) throws {
        let batch = 10_000
        let (first, last) = try store.environment.read { txn in
            let first = try filter.since.map { try store.ledger.firstSequence(recordedAtOrAfter: $0, in: txn) } ?? 1
            let head = try store.ledger.head(in: txn).sequence
            var last = head
            if let until = filter.until, until < .max,
                let after = try store.ledger.firstSequence(recordedAtOrAfter: until + 1, in: txn)
            {
                last = after - 1
            }
            return (first, last)
        }
        let total = first.map { last >= $0 ? last - $0 + 1 : 0 } ?? 0
        var scanned: UInt64 = 0
        var next = first
        while let start = next {
            next = nil
            var seen = 0
            try store.environment.read { txn in
                try store.ledger.forEachRecord(from: start, in: txn) { sequence, record in
                    if let until = filter.until, try RecordFormat.recordedAt(of: record) > until { return .stop }
                    try emit(try RecordFormat.decode(record))
                    seen += 1
                    if seen == batch {
                        next = sequence + 1
                        return .stop
                    }
                    return .continue
                }
            }
            scanned += UInt64(seen)
            progress(min(scanned, total), total)
        }
    }

    public func events(of uid: UserID, in project: ProjectID) throws -> [EventEnvelope] {
        try store.environment.read { txn in try store.ledger.events(of: .account(project, uid), in: txn) }
    }

    /// The account as of `time`: the fold of its events recorded at or before then.
    public func account(_ uid: UserID, in project: ProjectID, at time: Int64) throws -> (account: Account?, through: EventEnvelope?) {
        var account: Account?
        var last: EventEnvelope?
        for envelope in try events(of: uid, in: project) where envelope.recordedAt <= time {
            account = Evolve.account(account, envelope.payload, uid: uid, at: envelope.recordedAt)
            last = envelope
        }
        return (account, last)
    }

    public static func text(_ envelope: EventEnvelope) -> String {
        let payload = (try? EventJSON.payload(envelope.payload)) ?? ""
        var actor = envelope.metadata.actor.rawValue
        if let id = envelope.metadata.actorId { actor += ":\(id)" }
        return "#\(envelope.sequence)  \(Timestamp.iso8601(milliseconds: envelope.recordedAt))  \(envelope.stream) v\(envelope.streamVersion)  \(envelope.type.name)  by \(actor)  \(payload)"
    }
}
