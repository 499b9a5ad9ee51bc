import HearthWire
import Hummingbird

/// One condition `/readyz` checks, and whether it holds.
public struct ReadinessCheck: Sendable, Equatable {
    public var name: String
    public var ok: Bool
    public var detail: String?

    public init(name: String, ok: Bool, detail: String? = nil) {
        self.name = name
        self.ok = ok
        self.detail = detail
    }
}

/// Runs the daemon's readiness checks (the composition root knows what to check).
public typealias ReadinessProbe = @Sendable () async -> [ReadinessCheck]

/// `GET /healthz`: the process answers. `GET /readyz`: it can serve, every check holding (the
/// ledger open, projections caught up, the writer committing, the disk not full); 503 with the
/// failing checks otherwise. Unauthenticated and cheap: one probe runs at a time, and its
/// answer serves every caller for a second, so polling can not load the writer. The checks'
/// details (the ledger's head, an error's text) are for the operator: in production only with
/// the operator's token.
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
            var entry: [String: JSONValue] = ["ok": .bool(check.ok)]
            if detailed, let detail = check.detail { entry["detail"] = .string(detail) }
            report[check.name] = .object(entry)
        }
        return JSONResponse.make(ready ? .ok : .serviceUnavailable, ["status": ready ? "ready" : "not ready", "checks": .object(report)])
    }
}

/// The last readiness answer, fresh for a second; concurrent callers share one probe.
actor ReadinessCache {
    private let probe: ReadinessProbe
    private var last: (at: ContinuousClock.Instant, checks: [ReadinessCheck])?
    private var running: Task<[ReadinessCheck], Never>?
    static let freshFor: Duration = .seconds(1)

    init(_ probe: @escaping ReadinessProbe) {
        self.probe = probe
    }

    func checks() async -> [ReadinessCheck] {
        if let last, last.at.duration(to: .now) < Self.freshFor { return last.checks }
        if let running { return await running.value }
        let task = Task { [probe] in await probe() }
        running = task
        let checks = await task.value
        running = nil
        last = (.now, checks)
        return checks
    }
}
