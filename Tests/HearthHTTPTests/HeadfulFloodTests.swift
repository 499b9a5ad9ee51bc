import AsyncHTTPClient
import Foundation
import HTTPTypes
import HearthApp
import HearthAuth
import HearthWire
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

/// Handler starts cost memory for ten minutes each: one client address may start only so many.
@Suite("headful sign-in: a flood of handler starts")
struct HeadfulFloodTests {
    /// Opens the handler over TCP as the browser at `address` (behind the trusted proxy on
    /// loopback), without following the redirect.
    static func open(port: Int, from address: String, with client: HTTPClient) async throws -> (
        status: Int, location: String?, body: String
    ) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + HeadfulSignInTests.handlerURL(provider: "github.com"))
        request.headers.add(name: "X-Forwarded-For", value: address)
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        return (Int(response.status.code), response.headers.first(name: "Location"), String(buffer: body))
    }

    @Test("a flood from one address is refused (429) past the limit; another address's sign-in completes")
    func floodFromOneAddress() async throws {
        try await HeadfulSignInTests.run(
            production: true, live: true,
            configure: { configuration, _ in
                configuration.listen.trustedProxies = ["127.0.0.1", "::1"]
            }
        ) { _, api, providers in
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            do {
                let port = try #require(api.client.port)
                let user = try await Self.open(port: port, from: "198.51.100.7", with: client)
                #expect(user.status == 302)
                var statuses: [Int: Int] = [:]
                for _ in 0..<150 {
                    let flood = try await Self.open(port: port, from: "203.0.113.9", with: client)
                    statuses[flood.status, default: 0] += 1
                    if flood.status == 429 { #expect(flood.body.contains("Too many sign-ins")) }
                }
                #expect(statuses == [302: 100, 429: 50], "\(statuses)")
                let callback = try await providers.consent(at: user.location ?? "")
                var back = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + callback)
                back.headers.add(name: "X-Forwarded-For", value: "198.51.100.7")
                let deepLink = try await client.execute(back, timeout: .seconds(10)).headers.first(name: "Location") ?? ""
                let app = HeadfulSignInTests.query(HeadfulSignInTests.query(deepLink)["deep_link_id"] ?? "")
                let signedIn = try await api.v1(
                    "signInWithIdp",
                    [
                        "requestUri": .string(app["link"] ?? ""), "sessionId": .string(HeadfulSignInTests.sessionID),
                        "postBody": "providerId=github.com", "returnSecureToken": true,
                    ])
                #expect(signedIn.status == 200 && signedIn.string("federatedId") == "4242", "\(signedIn.json)")
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }
}
