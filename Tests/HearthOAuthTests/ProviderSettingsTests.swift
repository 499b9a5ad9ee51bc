import HearthAuth
import HearthDomain
import HearthOAuth
import HearthWire
import Testing

@Suite("identity providers: endpoints and the network they may be reached on")
struct ProviderSettingsTests {
    @Test("endpoint overrides: GitHub's web and API, an issuer per OpenID Connect provider; anything else is refused")
    func endpoints() throws {
        let endpoints = try ProviderEndpoints(overrides: [
            "github.com": ["webUrl": "https://github.example/", "apiUrl": "https://github.example/api/v3"],
            "yahoo.com": ["issuer": "https://login.example"],
        ])
        #expect(endpoints.gitHubWeb == "https://github.example" && endpoints.gitHubAPI == "https://github.example/api/v3")
        #expect(endpoints.issuers[.yahoo] == "https://login.example")
        #expect(try ProviderEndpoints(overrides: [:]) == ProviderEndpoints())
        for bad: [String: JSONValue] in [
            ["github.com": ["issuer": "https://github.example"]],  // GitHub is not OpenID Connect
            ["yahoo.com": ["issuer": "https://login.example/?tenant=1"]],  // an issuer has no query
            ["github.com": ["apiUrl": "https://user@api.example"]],  // no user info
            ["github.com": ["webUrl": "ftp://github.example"]],
            ["github.com": "https://github.example"],
        ] {
            #expect(throws: ProviderEndpoints.Invalid.self) { try ProviderEndpoints(overrides: bad) }
        }
    }

    @Test("only public addresses over https, unless a network is allowed; hosts match exactly or by *.domain")
    func networkPolicy() async throws {
        let strict = ProviderNetworkPolicy()
        #expect(try await strict.address(for: ProviderURL("https://93.184.215.14/token")) == IPAddress("93.184.215.14"))
        for refused in [
            "https://127.0.0.1/token", "https://10.0.0.8/token", "https://[::1]/token", "https://169.254.169.254/latest",
            "http://93.184.215.14/token",
        ] {
            await #expect(throws: ProviderNetworkPolicy.Refused.self, "\(refused)") {
                try await strict.address(for: ProviderURL(refused))
            }
        }
        let lab = ProviderNetworkPolicy(allowedNetworks: [IPNetwork("10.1.2.0/24")!] + ProviderNetworkPolicy.loopback)
        #expect(try await lab.address(for: ProviderURL("http://10.1.2.3:8080/oidc")) == IPAddress("10.1.2.3"))
        #expect(try await lab.address(for: ProviderURL("http://localhost:9/x")).isLoopback)
        await #expect(throws: ProviderNetworkPolicy.Refused.self) { try await lab.address(for: ProviderURL("http://10.1.3.3/x")) }
        let hosts = ProviderNetworkPolicy(allowedHosts: ["login.example.com", "*.corp.example"])
        #expect(hosts.allowsHost("login.example.com") && hosts.allowsHost("sso.corp.example"))
        #expect(!hosts.allowsHost("evil-login.example.com") && !hosts.allowsHost("corp.example.evil"))
    }
}
