import AsyncHTTPClient
import Foundation
import HearthAuth
import HearthWire
import NIOCore
import NIOHTTP1

/// HTTP to identity providers: a deadline on every call, answers bounded in size, and every URL
/// checked first (`ProviderURL`'s shape, then `ProviderNetworkPolicy` on the addresses it
/// resolves to). A provider that is down or slow is `IdentityProviderFailure.unavailable`,
/// never a hang.
struct ProviderHTTP: Sendable {
    var timeout: TimeAmount = .seconds(10)
    var policy = ProviderNetworkPolicy()
    static let maxBody = 1 << 20

    /// Redirects are not followed: a 307 or 308 from a token endpoint would resend the client
    /// secret to wherever it points (and a redirect would skip the address check). Lives as
    /// long as the process, as `HTTPClient.shared` does; used for URLs whose host is an address.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    struct Answer {
        var status: Int
        var json: JSONValue?
    }

    func get(_ url: String, bearer: String? = nil, accept: String = "application/json") async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: accept)
        request.headers.add(name: "User-Agent", value: "Hearth")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        return try await send(request)
    }

    /// A JSON body with HTTP Basic authentication (GitHub's check-a-token API).
    func postJSON(_ url: String, _ body: JSONValue, user: String, password: String) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Accept", value: "application/vnd.github+json")
        request.headers.add(name: "User-Agent", value: "Hearth")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        request.body = .bytes(ByteBuffer(bytes: body.encoded()))
        return try await send(request)
    }

    func postForm(_ url: String, _ form: [String: String]) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Hearth")
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(form.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })))
        return try await send(request)
    }

    private static func fetch(_ request: HTTPClientRequest, with client: HTTPClient, timeout: TimeAmount) async throws -> Answer {
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: maxBody)
        return Answer(status: Int(response.status.code), json: JSONValue.parse(body.readableBytesView))
    }

    private func send(_ request: HTTPClientRequest) async throws -> Answer {
        let target: ProviderURL
        do {
            target = try ProviderURL(request.url)
        } catch {
            throw IdentityProviderFailure.invalid("refused to fetch: \(error)")
        }
        let host = target.host
        do {
            // One deadline for the resolution, the head and the whole body: a provider trickling
            // its answer byte by byte is as unavailable as one that never answers.
            return try await withThrowingTaskGroup(of: Answer.self) { group in
                group.addTask { [policy, timeout] in
                    let address = try await policy.address(for: target)
                    guard IPAddress(host) == nil else { return try await Self.fetch(request, with: Self.client, timeout: timeout) }
                    // A host by name: connected to at the address just checked (AsyncHTTPClient's
                    // DNS override keeps the name for the Host header, SNI and the certificate
                    // check), so a second resolution can not send the request elsewhere.
                    var configuration = HTTPClient.Configuration()
                    configuration.redirectConfiguration = .disallow
                    var overrides = [host: address.description]
                    if let written = URL(string: request.url)?.host { overrides[written] = address.description }
                    configuration.dnsOverride = overrides
                    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
                    do {
                        let answer = try await Self.fetch(request, with: client, timeout: timeout)
                        try? await client.shutdown()
                        return answer
                    } catch {
                        try? await client.shutdown()
                        throw error
                    }
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(timeout.nanoseconds))
                    throw HTTPClientError.deadlineExceeded
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch let refused as ProviderNetworkPolicy.Refused {
            throw IdentityProviderFailure.invalid("refused to connect: \(refused)")
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw IdentityProviderFailure.unavailable("\(host) did not answer within \(timeout.nanoseconds / 1_000_000_000) s")
        } catch is NIOTooManyBytesError {
            throw IdentityProviderFailure.invalid("\(host) answered with more than \(Self.maxBody) bytes")
        } catch let failure as IdentityProviderFailure {
            throw failure
        } catch {
            throw IdentityProviderFailure.unavailable("\(host) can not be reached (\(error))")
        }
    }
}

/// A URL with query parameters appended.
func url(_ base: String, _ parameters: [(String, String)]) -> String {
    let query = FormEncoding.encode(parameters.map { ($0.0, $0.1) })
    return base + (base.contains("?") ? "&" : "?") + query
}
