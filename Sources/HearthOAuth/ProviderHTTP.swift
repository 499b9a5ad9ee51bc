import Foundation
import AsyncHTTPClient
import HearthAuth
import HearthWire
import NIOCore
import NIOHTTP1

/// HTTP to identity providers: one client for the process, a deadline on every call, answers
/// bounded in size. A provider that is down or slow is `IdentityProviderFailure.unavailable`,
/// never a hang.
struct ProviderHTTP: Sendable {
    var timeout: TimeAmount = .seconds(10)
    static let maxBody = 1 << 20

    /// Redirects are not followed: a 307 or 308 from a token endpoint would resend the client
    /// secret to wherever it points. Lives as long as the process, as `HTTPClient.shared` does.
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

    private func send(_ request: HTTPClientRequest) async throws -> Answer {
        let host = request.url.split(separator: "/").dropFirst().first.map(String.init) ?? request.url
        do {
            // One deadline for the head and the whole body: a provider trickling its answer
            // byte by byte is as unavailable as one that never answers.
            return try await withThrowingTaskGroup(of: Answer.self) { group in
                group.addTask {
                    let response = try await Self.client.execute(request, timeout: timeout)
                    let body = try await response.body.collect(upTo: Self.maxBody)
                    return Answer(status: Int(response.status.code), json: JSONValue.parse(body.readableBytesView))
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(timeout.nanoseconds))
                    throw HTTPClientError.deadlineExceeded
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw IdentityProviderFailure.unavailable("\(host) did not answer within \(timeout.nanoseconds / 1_000_000_000) s")
        } catch is NIOTooManyBytesError {
            throw IdentityProviderFailure.invalid("\(host) answered with more than \(Self.maxBody) bytes")
        } catch let failure as IdentityProviderFailure {
            throw failure
        } catch {
            throw IdentityProviderFailure.unavailable("\(host) can not be reached")
        }
    }
}

/// A URL with query parameters appended.
func url(_ base: String, _ parameters: [(String, String)]) -> String {
    let query = FormEncoding.encode(parameters.map { ($0.0, $0.1) })
    return base + (base.contains("?") ? "&" : "?") + query
}
