import HTTPTypes
import HearthApp
import HearthAuth
import HearthHTTP
import HearthStore
import HearthTesting
import HearthWire
import HummingbirdTesting
import NIOCore
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
            // The details (the ledger's head) are the operator's.
            #expect(ready["checks"]?["ledger"]?["detail"] == nil)
            let detailed = try await api.send(
                .get, "/readyz", body: nil, headers: [.authorization: "Bearer \(HeadfulSignInTests.adminToken)"])
            #expect(detailed["checks"]?["ledger"]?["detail"]?.stringValue?.hasPrefix("head ") == true)
        }
    }

    @Test("a store that is closed is not ready: the writer check fails, and says so")
    func closedStore() async throws {
        // Not through `APIHarness.run`: its event dump reads the store after the body.
        let harness = try APIHarness()
        try await harness.server.application.test(.router) { client in
            let api = APIClient(client: client)
            harness.context.store.close()
            // Past the one-second cache of the last answer, on the daemon's clock.
            harness.clock.advance(milliseconds: 1100)
            let ready = try await api.send(.get, "/readyz", body: nil, headers: [:])
            #expect(ready.status == 503 && ready["status"] == "not ready")
            #expect(ready["checks"]?["writer"]?["ok"] == false)
        }
    }
}

@Suite("metrics endpoint")
struct MetricsTests {
    static func scrape(_ api: APIClient, headers: HTTPFields = [:]) async throws -> (Int, String) {
        let response = try await api.client.executeRequest(uri: "/metrics", method: .get, headers: headers, body: nil)
        return (Int(response.status.code), String(buffer: response.body))
    }

    @Test("/metrics: Prometheus text with the live gauges; open in development, admin-only in production")
    func access() async throws {
        try await APIHarness.run { _, api in
            _ = try await api.signUp(email: "metrics@example.com")
            let (status, text) = try await Self.scrape(api)
            #expect(status == 200)
            #expect(text.contains("hearth_ledger_head_sequence") && text.contains("hearth_password_hash_queue_waiting"))
            #expect(text.contains("hearth_disk_full 0"), "\(text)")
        }
        try await APIHarness.run(configure: RecentSignInTests.production) { _, api in
            let statuses = [
                try await Self.scrape(api).0, try await Self.scrape(api, headers: [.authorization: "Bearer not-the-token"]).0,
                try await Self.scrape(api, headers: [.authorization: "Bearer \(HeadfulSignInTests.adminToken)"]).0,
            ]
            #expect(statuses == [401, 401, 200])
        }
        // A project's own admin token: the figures are every project's, so not its to read.
        try await APIHarness.run(configure: { configuration in
            RecentSignInTests.production(&configuration)
            configuration.secrets.adminTokens.append(
                AdminCredential(token: TenantIsolationTests.tenantToken, scope: .projects([APIHarness.project])))
        }) { _, api in
            let (status, text) = try await Self.scrape(api, headers: [.authorization: "Bearer \(TenantIsolationTests.tenantToken)"])
            #expect(status == 403 && !text.contains("hearth_ledger_head_sequence"))
        }
    }
}
