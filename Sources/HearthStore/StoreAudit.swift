import HearthDomain
import HearthLedger
import LMDB

/// The audit queries: read-only, in bounded read transactions, safe beside a running daemon.
public struct StoreAudit: Sendable {
    let store: AccountStore

    /// Which events a replay prints.
    public struct Filter: Sendable {
        public var project: ProjectID
        public var uid: UserID?
        public var types: Set<String> = []
        /// Unix milliseconds, inclusive.
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

    public struct ReplaySummary: Sendable, Equatable {
        /// Events handed to the caller (those the filter matched).
        public var matched: UInt64 = 0
        /// Events read to find them.
        public var scanned: UInt64 = 0
    }

    /// Hands each event the filter matches to `emit`, in sequence order. With a uid, the stream
    /// index gives that account's events directly, whatever the ledger's size; otherwise the
    /// ledger is read from `since` (found by binary search) in batches, and `progress(scanned,
    /// total)` runs after each, total being the events between `since` and `until`.
    @discardableResult
    public func replay(
        _ filter: Filter, progress: (_ scanned: UInt64, _ total: UInt64) -> Void = { _, _ in },
        _ emit: (StoredEvent) throws -> Void
    ) throws -> ReplaySummary {
        var summary = ReplaySummary()
        func visit(_ envelope: EventEnvelope) throws {
            summary.scanned += 1
            guard filter.matches(envelope) else { return }
            try emit(StoredEvent(envelope))
            summary.matched += 1
        }
        try translatingErrors {
            if let uid = filter.uid {
                for envelope in try envelopes(of: .account(filter.project, uid)) { try visit(envelope) }
            } else {
                try replayAll(filter, visit, progress: progress)
            }
        }
        return summary
    }

    private func replayAll(
        _ filter: Filter, _ visit: (EventEnvelope) throws -> Void, progress: (UInt64, UInt64) -> Void
    ) throws {
        let batch = 10_000
        let ledger = store.ledger
        let (first, last) = try store.environment.read { txn in
            let first = try filter.since.map { try ledger.firstSequence(recordedAtOrAfter: $0, in: txn) } ?? 1
            var last = try ledger.head(in: txn).sequence
            if let until = filter.until, until < .max,
                let after = try ledger.firstSequence(recordedAtOrAfter: until + 1, in: txn)
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
                let keys = Ledger.KeyCache()
                try ledger.forEachRecord(from: start, in: txn) { sequence, record in
                    if let until = filter.until, try RecordFormat.recordedAt(of: record) > until { return .stop }
                    try visit(try ledger.decode(record, in: txn, cache: keys))
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

    /// The action codes issued for `uid` (a subject-access export's other half: a code's
    /// address is about its account), as their streams in the order they were issued. No
    /// index says which codes an account had once they are used, so the ledger is read, in
    /// batches (short read transactions beside a running daemon); only each code's first
    /// record is decoded. `progress(scanned, total)` runs after each batch.
    public func codeStreams(
        issuedFor uid: UserID, in project: ProjectID, progress: (_ scanned: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) throws -> [StreamID] {
        let batch = 100_000
        let ledger = store.ledger
        var found: [StreamID] = []
        try translatingErrors {
            let total = try store.environment.read { txn in try ledger.head(in: txn).sequence }
            var next: UInt64? = 1
            var scanned: UInt64 = 0
            while let start = next, start <= total {
                next = nil
                var seen = 0
                try store.environment.read { txn in
                    let keys = Ledger.KeyCache()
                    try ledger.forEachRecord(from: start, in: txn) { sequence, record in
                        let place = try RecordFormat.place(of: record)
                        if case .oobCode(project, _) = place.stream, place.version == 1,
                            case .oobCodeIssued(let issued) = try ledger.decode(record, in: txn, cache: keys).payload, issued.uid == uid
                        {
                            found.append(place.stream)
                        }
                        seen += 1
                        guard seen < batch, sequence < total else {
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
        return found
    }

    /// One stream's events in stream order, through the stream index.
    public func events(of stream: StreamID) throws -> [StoredEvent] {
        try translatingErrors { try envelopes(of: stream).map(StoredEvent.init) }
    }

    /// A stream's last `limit` events in stream order, and how many it holds: O(limit).
    public func events(of stream: StreamID, last limit: Int) throws -> (events: [StoredEvent], total: UInt64) {
        try translatingErrors {
            let (envelopes, total) = try store.environment.read { txn in try store.ledger.events(of: stream, last: limit, in: txn) }
            return (envelopes.map(StoredEvent.init), total)
        }
    }

    private func envelopes(of stream: StreamID) throws -> [EventEnvelope] {
        try store.environment.read { txn in try store.ledger.events(of: stream, in: txn) }
    }

    /// Whether the stream has any event (an account deleted or purged long ago still has).
    public func hasEvents(_ stream: StreamID) throws -> Bool {
        try translatingErrors { try store.environment.read { txn in try store.ledger.version(of: stream, in: txn) } > 0 }
    }

    /// The account as of `time`: the fold of its events recorded at or before then, and the
    /// last of those events (`nil` if it had none; the account is `nil` if it was deleted).
    /// `isErased`: its key was destroyed since, so the account comes without its personal
    /// fields. Known from every event folded since it was created, not from the last alone,
    /// which may have held nothing sealed (an admin's `disabled`, say) and so nothing erased.
    public func account(_ uid: UserID, in project: ProjectID, at time: Int64) throws
        -> (account: Account?, through: StoredEvent?, isErased: Bool)
    {
        var account: Account?
        var last: EventEnvelope?
        var isErased = false
        let envelopes = try translatingErrors {
            try store.environment.read { txn in try store.ledger.events(of: .account(project, uid), recordedThrough: time, in: txn) }
        }
        for envelope in envelopes {
            account = Evolve.account(account, envelope.payload, uid: uid, at: envelope.recordedAt)
            // An account created again after a deletion starts with a key of its own.
            isErased = account != nil && (isErased || envelope.personalData == .erased)
            last = envelope
        }
        return (isErased ? account.map(PersonalData.erasing) : account, last.map(StoredEvent.init), isErased)
    }

    /// What walking the hash chain found.
    public struct Verification: Equatable, Sendable {
        public var eventsChecked: UInt64
        /// Hash (hex) of the last good event; publish it elsewhere to anchor the chain.
        public var headHash: String
        /// The first bad event and why, if any record was altered.
        public var failure: (sequence: UInt64, reason: String)?
        /// The ledger this one replaced when it was sealed (`hearth ledger seal`), whose head
        /// the first event links to: its last sequence number, hash (hex) and when.
        public var continues: (sequence: UInt64, hash: String, sealedAt: Int64, sealedBy: String?)?
        /// Events recorded before personal data was sealed, which hold it in plain text until
        /// `hearth ledger seal` rewrites them: erasing or deleting an account does not forget
        /// what they hold.
        public var plainTextEvents: UInt64 = 0

        public var isIntact: Bool { failure == nil }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.eventsChecked == rhs.eventsChecked && lhs.headHash == rhs.headHash
                && lhs.failure?.sequence == rhs.failure?.sequence && lhs.failure?.reason == rhs.failure?.reason
                && lhs.continues?.sequence == rhs.continues?.sequence && lhs.continues?.hash == rhs.continues?.hash
                && lhs.plainTextEvents == rhs.plainTextEvents
        }
    }

    /// Walks the SHA-256 chain from the first event: gapless sequence numbers, every previous
    /// hash equal to the prior record's, every hash recomputed. `progress(checked, total)`.
    public func verify(progress: (_ checked: UInt64, _ total: UInt64) -> Void = { _, _ in }) throws -> Verification {
        let outcome = try translatingErrors {
            try LedgerVerifier(ledger: store.ledger, environment: store.environment).verify(progress: progress)
        }
        return Verification(
            eventsChecked: outcome.eventsChecked, headHash: hex(outcome.headHash),
            failure: outcome.failure.map { ($0.sequence, $0.reason) },
            continues: outcome.origin.map { ($0.previousSequence, hex($0.previousHash), $0.sealedAt, $0.sealedBy) },
            plainTextEvents: outcome.plainTextRecords)
    }
}
