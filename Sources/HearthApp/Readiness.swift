import HearthHTTP
import HearthScheduler
import HearthStore

/// What `/readyz` checks: the ledger reads, the projections caught up with it at start, the
/// writer commits (an empty job through it, bounded by a deadline), the disk is not full.
enum Readiness {
    static let writerDeadline: Duration = .seconds(2)

    static func checks(store: AccountStore, caughtUp: StartSignal) async -> [ReadinessCheck] {
        var checks: [ReadinessCheck] = []
        do {
            let head = try store.ledgerHead()
            checks.append(ReadinessCheck(name: "ledger", ok: true, detail: "head \(head.sequence)"))
        } catch {
            checks.append(ReadinessCheck(name: "ledger", ok: false, detail: "\(error)"))
        }
        checks.append(ReadinessCheck(name: "projections", ok: caughtUp.isOpen, detail: caughtUp.isOpen ? nil : "catching up"))
        checks.append(await writer(store))
        let diskFullSince = store.writeHealth.diskFullSince
        checks.append(ReadinessCheck(name: "disk", ok: diskFullSince == nil, detail: diskFullSince.map { _ in "full: writes refused" }))
        return checks
    }

    private static func writer(_ store: AccountStore) async -> ReadinessCheck {
        do {
            try await store.probeWriter(within: writerDeadline)
            return ReadinessCheck(name: "writer", ok: true)
        } catch {
            return ReadinessCheck(name: "writer", ok: false, detail: "\(error)")
        }
    }
}
