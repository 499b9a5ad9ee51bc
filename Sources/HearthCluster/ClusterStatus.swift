import HearthWire

/// `hearth cluster status`: what etcd says of a cluster, the leader key, the synchronous set and
/// every node's registration, with each node's lag behind the leader in events (from the heads
/// they last reported, every few seconds) and in milliseconds (as each follower measured it).
public struct ClusterStatus: Sendable, Equatable {
    public var cluster: String
    /// The leader key's holder, its term the key's create revision; `nil` when none holds it.
    public var leader: MemberRecord?
    /// Every registered node, by name.
    public var members: [MemberRecord]
    /// Which followers hold every acknowledged write (and so, with the last leader, which nodes
    /// may take over); `nil` before any node led.
    public var synchronous: SynchronousSet?

    public static func read(cluster: String, etcd endpoints: [String]) async throws(EtcdError) -> ClusterStatus {
        let keys = ClusterConfiguration(name: cluster, node: "-", etcd: endpoints, advertiseURL: "")
        let etcd = EtcdClient(endpoints: endpoints)
        var leader = try await etcd.get(keys.leaderKey).flatMap { key in
            MemberRecord(key.value).map { record in
                var record = record
                record.term = key.createRevision
                return record
            }
        }
        let members = try await Self.members(of: keys, through: etcd)
        if let node = leader?.node, let registered = members.first(where: { $0.node == node }) { leader?.head = registered.head }
        let synchronous = try await etcd.get(keys.synchronousKey).flatMap { SynchronousSet($0.value) }
        return ClusterStatus(cluster: cluster, leader: leader, members: members, synchronous: synchronous)
    }

    /// Every node registered in `configuration`'s cluster, by name: the members alone, one read.
    public static func members(of configuration: ClusterConfiguration) async throws(EtcdError) -> [MemberRecord] {
        try await members(of: configuration, through: EtcdClient(endpoints: configuration.etcd))
    }

    private static func members(of configuration: ClusterConfiguration, through etcd: EtcdClient) async throws(EtcdError) -> [MemberRecord]
    {
        try await etcd.list(prefix: configuration.membersPrefix).compactMap { MemberRecord($0.value) }.sorted { $0.node < $1.node }
    }

    static func describe(_ synchronous: SynchronousSet) -> String {
        guard !synchronous.asynchronous else { return "asynchronous: a failover may lose the latest acknowledged writes" }
        let followers = synchronous.followers.isEmpty ? "none" : synchronous.followers.joined(separator: ", ")
        let successors = ([synchronous.leader] + synchronous.followers).joined(separator: ", ")
        return "synchronous followers: \(followers) (\(synchronous.required) required); may take over: \(successors)"
    }

    /// Events `member` is behind the leader, by the heads both last reported.
    public func lag(of member: MemberRecord) -> Int64? {
        guard let leaderHead = leader?.head, let head = member.head else { return nil }
        return Int64(clamping: leaderHead) - Int64(clamping: head)
    }

    /// The report as lines of text, or one JSON object; `now` (Unix ms) ages the reports.
    public func lines(json: Bool, now: Int64) -> [String] {
        if json {
            var object: [String: JSONValue] = ["cluster": .string(cluster)]
            object["leader"] = leader.map { .string($0.node) } ?? .null
            object["term"] = leader?.term.map { .int($0) } ?? .null
            object["synchronousFollowers"] = synchronous.map { .array($0.followers.map(JSONValue.string)) } ?? .null
            object["requiredFollowers"] = synchronous.map { .int(Int64($0.required)) } ?? .null
            object["asynchronous"] = synchronous.map { .bool($0.asynchronous) } ?? .null
            object["members"] = .array(
                members.map { member in
                    var entry: [String: JSONValue] = [
                        "node": .string(member.node), "url": .string(member.url), "role": .string(member.role.rawValue),
                        "reportedAt": .int(member.at),
                    ]
                    entry["term"] = member.term.map { .int($0) } ?? .null
                    entry["head"] = member.head.map { .int(Int64(clamping: $0)) } ?? .null
                    entry["lagEvents"] = lag(of: member).map { .int($0) } ?? .null
                    entry["lagMs"] = member.lagMilliseconds.map { .int($0) } ?? .null
                    entry["synchronous"] = .bool(synchronous?.followers.contains(member.node) ?? false)
                    return .object(entry)
                })
            return [JSONValue.object(object).text]
        }
        var lines = [
            "cluster \(cluster): "
                + (leader.map { "leader \($0.node) (term \($0.term.map(String.init) ?? "?"))" } ?? "no leader (none holds the leader key)")
        ]
        if let synchronous { lines.append(Self.describe(synchronous)) }
        let header = ["node", "role", "sync", "term", "head", "lag", "lag ms", "url", "reported"]
        let rows = members.map { member -> [String] in
            let isSynchronous = synchronous?.followers.contains(member.node) == true
            let term = member.term.map(String.init) ?? "-"
            let head = member.head.map(String.init) ?? "-"
            let events = lag(of: member).map(String.init) ?? "-"
            let milliseconds = member.lagMilliseconds.map(String.init) ?? "-"
            let age = "\(max(0, now - member.at) / 1000) s ago"
            return [member.node, member.role.rawValue, isSynchronous ? "yes" : "-", term, head, events, milliseconds, member.url, age]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            lines.append(
                zip(row, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }.joined(separator: "  ")
                    .trimmingTrailingSpaces())
        }
        if members.isEmpty { lines.append("no node is registered") }
        return lines
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
