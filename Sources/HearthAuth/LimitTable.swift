import Synchronization

/// Per-key state of one limit (a token bucket, a backoff), in a table that never holds more than
/// `capacity` keys: when full, entries that have nothing left to remember go first, then the
/// longest untouched of those not holding anyone back (a lock, a check under way), then the
/// rest. A flood of new keys (spoofed or rotated addresses) costs bounded memory, and can not
/// push out the lock on an account it is guessing at before everything else has gone.
final class LimitTable<Entry: LimitEntry>: Sendable {
    private let entries = Mutex<[String: Entry]>([:])
    let capacity: Int

    init(capacity: Int = 65_536) {
        self.capacity = capacity
    }

    /// Runs `body` on the key's entry (a fresh one if absent) and keeps what it leaves.
    func update<R>(_ key: String, now: Int64, _ body: (inout Entry) -> R) -> R {
        entries.withLock { entries in
            if entries[key] == nil && entries.count >= capacity { Self.evict(&entries, now: now, to: capacity * 7 / 8) }
            var entry = entries[key] ?? Entry(now: now)
            let result = body(&entry)
            entries[key] = entry.isSpent(now: now) ? nil : entry
            return result
        }
    }

    /// The key's entry, without creating one.
    func peek(_ key: String) -> Entry? {
        entries.withLock { $0[key] }
    }

    func remove(_ key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    var count: Int { entries.withLock { $0.count } }

    private static func evict(_ entries: inout [String: Entry], now: Int64, to target: Int) {
        entries = entries.filter { !$0.value.isSpent(now: now) }
        guard entries.count > target else { return }
        let oldest = entries.sorted { lhs, rhs in
            let (left, right) = (lhs.value.isHolding(now: now), rhs.value.isHolding(now: now))
            return left != right ? !left : lhs.value.touchedAt < rhs.value.touchedAt
        }.prefix(entries.count - target)
        for (key, _) in oldest { entries.removeValue(forKey: key) }
    }
}

protocol LimitEntry: Sendable {
    init(now: Int64)
    var touchedAt: Int64 { get }
    /// Nothing worth keeping: a full bucket, a backoff long forgotten.
    func isSpent(now: Int64) -> Bool
    /// Holding a client back now (a lock, a check under way): evicted last.
    func isHolding(now: Int64) -> Bool
}

extension LimitEntry {
    func isHolding(now: Int64) -> Bool { false }
}

/// `capacity` actions per `period`, refilled continuously; a burst may use all of them at once.
struct TokenBucket: LimitEntry {
    var used: Double = 0
    var touchedAt: Int64

    init(now: Int64) { touchedAt = now }

    /// Takes one action if there is room; otherwise the milliseconds until there is.
    mutating func take(capacity: Int, period: Int64, now: Int64) -> Int64? {
        let refill = Double(max(0, now - touchedAt)) * Double(capacity) / Double(period)
        used = max(0, used - refill)
        touchedAt = now
        guard used + 1 <= Double(capacity) else {
            return Int64(((used + 1 - Double(capacity)) * Double(period) / Double(capacity)).rounded(.up))
        }
        used += 1
        return nil
    }

    func isSpent(now: Int64) -> Bool { used == 0 && now > touchedAt }
}

/// Failures counted until `free` of them, then each failure locks out further attempts for
/// 1 s, 2 s, 4 s, … up to `maxDelay`. An attempt is reserved before its password is checked and
/// settled after, under the table's lock: checks under way count against what is left, so any
/// number of concurrent guesses checks no more passwords than sequential ones would (`free`,
/// then one at a time). Forgotten an hour after its last failure and lock; an entry without a
/// failure is kept only while a check is under way, so attempts that do not fail (a refused or
/// successful one) leave nothing behind and never keep a shared address's count alive.
struct Backoff: LimitEntry {
    var failures = 0
    var inFlight = 0
    var lockedUntil: Int64 = 0
    var lastFailureAt: Int64 = 0
    var touchedAt: Int64

    init(now: Int64) { touchedAt = now }

    /// How long to wait before a check is allowed again; `nil` and one check reserved otherwise.
    mutating func reserve(free: Int, now: Int64) -> Int64? {
        if lockedUntil > now { return lockedUntil - now }
        // What is left of the free allowance, counting the checks under way; past it, one at a time.
        guard inFlight < max(free - failures, 1) else { return Self.busyRetry }
        inFlight += 1
        touchedAt = now
        return nil
    }

    /// A reserved check ended: wrong (`failed`), right, or not made at all.
    mutating func settle(failed: Bool, free: Int, maxDelay: Int64, now: Int64) {
        inFlight = max(0, inFlight - 1)
        touchedAt = now
        guard failed else { return }
        failures += 1
        lastFailureAt = now
        // The `free`th failure is the last free one: the wait starts with it.
        guard failures >= free else { return }
        let doublings = min(failures - free, 40)
        lockedUntil = now + min(1000 << doublings, maxDelay)
    }

    /// What a client refused for checks under way is told to wait (they end within a second).
    static let busyRetry: Int64 = 1000

    func isSpent(now: Int64) -> Bool {
        inFlight == 0 && lockedUntil <= now && (failures == 0 || now > max(lockedUntil, lastFailureAt) + 3_600_000)
    }

    func isHolding(now: Int64) -> Bool { inFlight > 0 || lockedUntil > now }
}
