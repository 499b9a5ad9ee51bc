import HearthStore
import HearthWire

/// Patroni's synchronous standby, as Hearth keeps it in etcd (`/hearth/<c>/sync`): the leader
/// that wrote it, its term, the followers that must hold every write before the leader
/// acknowledges it, and how many that must be. Only the leader of `term` writes it (a
/// transaction that compares the leader key's create revision), and only after every follower
/// it adds holds everything acknowledged so far; so the nodes it names hold every acknowledged
/// write, and only they may take over (`mayLead`), whatever order the nodes come back in.
public struct SynchronousSet: Sendable, Equatable {
    public var leader: String
    public var term: Int64
    /// Sorted, for a stable encoding and comparison.
    public var followers: [String]
    /// How many followers a write needs. 0 while a first leader has had no follower (it
    /// acknowledges alone); it never drops back once one joined, so the cluster never degrades
    /// on its own.
    public var required: Int
    /// `cluster.synchronousFollowers` is 0: writes need no follower, and any node may take over
    /// (losing what it had not received).
    public var asynchronous: Bool

    public init(leader: String, term: Int64, followers: [String], required: Int, asynchronous: Bool) {
        self.leader = leader
        self.term = term
        self.followers = followers.sorted()
        self.required = required
        self.asynchronous = asynchronous
    }

    /// The set a new leader starts its term with: no follower has confirmed anything to it yet;
    /// the requirement carried over (so a cluster that had followers acknowledges nothing until
    /// one holds the new leader's ledger).
    public static func starting(
        term: Int64, leader: String, after previous: SynchronousSet?, configured: Int
    ) -> SynchronousSet {
        SynchronousSet(
            leader: leader, term: term, followers: [], required: min(configured, previous?.required ?? 0),
            asynchronous: configured == 0)
    }

    /// Whether `node` holds every acknowledged write: the last leader, one of its synchronous
    /// followers, or any node of an asynchronous cluster.
    public func mayLead(_ node: String) -> Bool {
        asynchronous || node == leader || followers.contains(node)
    }

    /// What the store waits for before acknowledging a write.
    public var requirement: SynchronousCommit.Requirement {
        asynchronous || (required == 0 && followers.isEmpty) ? .none : .followers(Set(followers), atLeast: required)
    }

    /// While the leader moves from this set to `next`: both sets' followers must confirm, so a
    /// write acknowledged meanwhile is held by whichever set etcd names when the leader fails.
    public func requirement(whileMovingTo next: SynchronousSet) -> SynchronousCommit.Requirement {
        let nodes = Set(followers).union(next.followers)
        return nodes.isEmpty && requirement == .none ? .none : .followers(nodes, atLeast: required)
    }

    /// This set with `followers` synchronous instead; the requirement rises with them, up to
    /// `configured`.
    public func with(followers: [String], configured: Int) -> SynchronousSet {
        SynchronousSet(
            leader: leader, term: term, followers: followers, required: min(configured, max(required, followers.count)),
            asynchronous: asynchronous)
    }

    public var encoded: [UInt8] {
        JSONValue.object([
            "leader": .string(leader), "term": .int(term), "followers": .array(followers.map(JSONValue.string)),
            "required": .int(Int64(required)), "asynchronous": .bool(asynchronous),
        ]).encoded()
    }

    public init?(_ bytes: [UInt8]) {
        guard let object = JSONValue.parse(bytes), let leader = object["leader"]?.stringValue, case .int(let term)? = object["term"],
            let followers = object["followers"]?.arrayValue, case .int(let required)? = object["required"], required >= 0,
            case .bool(let asynchronous)? = object["asynchronous"]
        else { return nil }
        let names = followers.compactMap(\.stringValue)
        guard names.count == followers.count else { return nil }
        self.init(leader: leader, term: term, followers: names, required: Int(required), asynchronous: asynchronous)
    }

    /// The followers the leader wants synchronous now: those of the set still confirming, then
    /// the most caught-up live others, up to `configured`; a member that stopped confirming is
    /// replaced only when another can take its place (kept, it may still take over).
    public func wanted(
        configured: Int, confirmations: [String: SynchronousCommit.Confirmation], head: UInt64, now: ContinuousClock.Instant,
        live: Duration, slack: UInt64
    ) -> [String] {
        guard !asynchronous, configured > 0 else { return [] }
        let isLive = { (node: String) in confirmations[node].map { now - $0.at <= live } ?? false }
        var chosen = Array(followers.filter(isLive).prefix(configured))
        let candidates = confirmations.filter { node, confirmation in
            node != leader && !followers.contains(node) && isLive(node) && confirmation.sequence + slack >= head
        }
        .sorted { ($0.value.sequence, $1.key) > ($1.value.sequence, $0.key) }
        for (node, _) in candidates where chosen.count < configured { chosen.append(node) }
        for node in followers where chosen.count < configured && !chosen.contains(node) { chosen.append(node) }
        return chosen.sorted()
    }
}
