import HearthAuth
import HearthWire
import Hummingbird

/// One condition `/readyz` checks, and whether it holds.
public struct ReadinessCheck: Sendable, Equatable {
    public var name: String
    public var ok: Bool
    public var detail: String?
    /// What any caller may read beside `ok`, as members of the check: a cluster node's role,
    /// term and lag, which a load balancer or a probe routes by.
    public var facts: [String: JSONValue]

    public init(name: String, ok: Bool, detail: String? = nil, facts: [String: JSONValue] = [:]) {
        self.name = name
        self.ok = ok
        self.detail = detail
        self.facts = facts
    }
}

/// Runs the daemon's readiness checks (the composition root knows what to check).
public typealias ReadinessProbe = @Sendable () async -> [ReadinessCheck]

/// `GET /healthz`: the process answers. `GET /readyz`: it can serve, every check holding (the
/// ledger open, projections caught up, the writer committing, the disk not full); 503 with the
/// failing checks otherwise. Unauthenticated and cheap: one probe runs at a time, and its
/// answer serves every caller for a second, so polling can not load the writer. The checks'
/// details (the ledger's head, an error's text) are for the operator: in production only with
/// the operator's token. A cluster node's role, term and lag are for anyone.
struct HealthAPI: Sendable {
    let readiness: ReadinessCache
    let access: APIAccess

    func healthz() -> Response {
        JSONResponse.ok(["status": "ok"])
    }

    func readyz(_ request: Request) async -> Response {
        let checks = await readiness.checks()
        let ready = checks.allSatisfy(\.ok)
        let detailed = access.profile == .development || ((try? access.isOperator(request)) ?? false)
        var report: [String: JSONValue] = [:]
        for check in checks {
            var entry = check.facts
            entry["ok"] = .bool(check.ok)
            if detailed, let detail = check.detail { entry["detail"] = .string(detail) }
            report[check.name] = .object(entry)
        }
        return JSONResponse.make(ready ? .ok : .serviceUnavailable, ["status": ready ? "ready" : "not ready", "checks": .object(report)])
    }
}

/// The last readiness answer, fresh for a second of the daemon's clock (a test moves it);
/// concurrent callers share one probe.
actor ReadinessCache {
    private let probe: ReadinessProbe
    /// Unix milliseconds.
    private let now: @Sendable () -> Int64
    private var last: (at: Int64, checks: [ReadinessCheck])?
    private var running: Task<[ReadinessCheck], Never>?
    static let freshForMilliseconds: Int64 = 1000

    init(_ probe: @escaping ReadinessProbe, now: @escaping @Sendable () -> Int64) {
        self.probe = probe
        self.now = now
    }

    func checks() async -> [ReadinessCheck] {
        // A clock set back counts as stale, not as fresh for ever.
        if let last, (0..<Self.freshForMilliseconds).contains(now() - last.at) { return last.checks }
        if let running { return await running.value }
        let task = Task { [probe] in await probe() }
        running = task
        let checks = await task.value
        running = nil
        last = (now(), checks)
        return checks
    }
}
