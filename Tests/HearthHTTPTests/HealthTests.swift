import HTTPTypes
import HearthAuth
import HearthHTTP
import HearthStore
import HearthWire
import Testing

@Suite("health endpoints")
struct HealthTests {
    @Test("/healthz answers; /readyz reports each check (ledger, projections, writer, disk), unauthenticated, in production too")
    func endpoints() async throws {
        try await APIHarness.run(configure: RecentSignInTests.production) { _, api in
            let health = try await api.send(.get, "/healthz", body: nil, headers: [:])
            #expect(health.status == 200 && health["status"] == "ok")
            let ready = try await api.send(.get, "/readyz", body: nil, headers: [:])
            #expect(ready.status == 200 && ready["status"] == "ready", "\(ready.json)")
            for check in ["ledger", "projections", "writer", "disk"] {
                #expect(ready["checks"]?[check]?["ok"] == true, "\(check)")
            }
        }
    }

    @Test("a store that is closed is not ready: the writer check fails, and says so")
    func closedStore() async throws {
        try await APIHarness.run { harness, api in
            harness.service.store.close()
            // Past the one-second cache of the last answer.
            try await Task.sleep(for: .milliseconds(1100))
            let ready = try await api.send(.get, "/readyz", body: nil, headers: [:])
            #expect(ready.status == 503 && ready["status"] == "not ready")
            #expect(ready["checks"]?["writer"]?["ok"] == false)
        }
    }
}
