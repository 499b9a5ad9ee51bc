import HearthAuth
import HearthDomain
import HearthTesting
import Testing

@Suite("flows: project settings, without HTTP")
struct ProjectServiceTests {
    @Test("settings change through the ledger; a link domain another project claimed is refused")
    func settingsAndLinkDomains() async throws {
        let flow = try FlowFixture("projects-settings")
        defer { try? flow.close() }
        let projects = flow.services.projects
        #expect(try projects.config(flow.admin).anonymousEnabled)
        let changed = try await projects.updateConfig(flow.admin) { config in
            var next = config
            next.authorizedDomains = ["localhost", "app.example.com"]
            next.linkDomains = ["links.example.com"]
            return next
        }
        #expect(changed.linkDomains == ["links.example.com"])
        #expect(try projects.authorizes(host: "app.example.com", in: TestStore.project))
        #expect(try !projects.authorizes(host: "evil.example.net", in: TestStore.project))
        #expect(try projects.linkDomainOwner("links.example.com")?.linkDomains == ["links.example.com"])
        let other = Caller(project: ProjectID("other-project")!, isAdmin: true)
        #expect(
            await refusal {
                try await projects.updateConfig(other) { config in
                    var next = config
                    next.linkDomains = ["links.example.com"]
                    return next
                }
            } == "INVALID_CONFIG")
    }

    @Test("cleanup status counts the anonymous accounts a project schedules")
    func cleanupStatus() async throws {
        let flow = try FlowFixture("projects-cleanup")
        defer { try? flow.close() }
        _ = try await flow.services.signIn.signUpAnonymously(flow.user)
        _ = try await flow.services.projects.updateConfig(flow.admin) { config in
            var next = config
            next.anonymousCleanup = true
            return next
        }
        let status = try await flow.services.projects.cleanupStatus(flow.admin)
        #expect(status.enabled && status.scheduled == 1 && status.dueNow == 0)
    }
}
