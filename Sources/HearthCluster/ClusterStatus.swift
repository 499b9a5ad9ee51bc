import HearthWire

/// `hearth cluster status`: what etcd says of a cluster, the leader key and every node's
/// registration, with each node's lag behind the leader in events (from the heads they last
/// reported, every few seconds).
public struct ClusterStatus: Sendable, Equatable {
    public var cluster: String
    /// The leader key's holder, its term the key's create revision; `nil` when none holds it.
    public var leader: MemberRecord?
    /// Every registered node, by name.
    public var members: [MemberRecord]

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
        let members = try await etcd.list(prefix: keys.membersPrefix).compactMap { MemberRecord($0.value) }.sorted { $0.node < $1.node }
        if let node = leader?.node, let registered = members.first(where: { $0.node == node }) { leader?.head = registered.head }
        return ClusterStatus(cluster: cluster, leader: leader, members: members)
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
            object["members"] = .array(
                members.map { member in
                    var entry: [String: JSONValue] = [
                        "node": .string(member.node), "url": .string(member.url), "role": .string(member.role.rawValue),
                        "reportedAt": .int(member.at),
                    ]
                    entry["term"] = member.term.map { .int($0) } ?? .null
                    entry["head"] = member.head.map { .int(Int64(clamping: $0)) } ?? .null
                    entry["lagEvents"] = lag(of: member).map { .int($0) } ?? .null
                    return .object(entry)
                })
            return [JSONValue.object(object).text]
        }
        var lines = [
            "cluster \(cluster): "
                + (leader.map { "leader \($0.node) (term \($0.term.map(String.init) ?? "?"))" } ?? "no leader (none holds the leader key)")
        ]
        let header = ["node", "role", "term", "head", "lag", "url", "reported"]
        let rows = members.map { member in
            [
                member.node, member.role.rawValue, member.term.map(String.init) ?? "-", member.head.map(String.init) ?? "-",
                lag(of: member).map(String.init) ?? "-", member.url, "\(max(0, now - member.at) / 1000) s ago",
            ]
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
