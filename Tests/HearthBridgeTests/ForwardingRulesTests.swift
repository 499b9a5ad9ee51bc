import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import HearthBridge

@Suite("the bridge's rules: loopback only, one upstream, hop-by-hop headers stay on their hop")
struct ForwardingRulesTests {
    let rules = ForwardingRules(upstream: try! Upstream("https://auth.example.com/hearth/"), listenHost: "127.0.0.1", listenPort: 9100)

    func head(_ uri: String, host: String?, method: HTTPMethod = .POST, extra: [(String, String)] = []) -> HTTPRequestHead {
        var headers = HTTPHeaders(extra)
        if let host { headers.add(name: "Host", value: host) }
        return HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)
    }

    @Test("a request for 127.0.0.1:PORT goes to the upstream's host, under its path prefix")
    func forwards() throws {
        let forwarded = try rules.upstreamHead(
            for: head(
                "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", host: "127.0.0.1:9100",
                extra: [
                    ("Content-Type", "application/json"), ("Content-Length", "2"), ("Connection", "keep-alive, X-Secret-Hop"),
                    ("X-Secret-Hop", "1"), ("Keep-Alive", "timeout=5"), ("Expect", "100-continue"), ("Proxy-Authorization", "Basic x"),
                    ("Authorization", "Bearer t"),
                ])
        ).get()
        #expect(forwarded.uri == "/hearth/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k")
        #expect(forwarded.headers["host"] == ["auth.example.com"])
        #expect(forwarded.headers["authorization"] == ["Bearer t"] && forwarded.headers["content-length"] == ["2"])
        for gone in ["connection", "x-secret-hop", "keep-alive", "expect", "proxy-authorization"] {
            #expect(forwarded.headers[gone].isEmpty, "\(gone)")
        }
        #expect(forwarded.version == .http1_1)
    }

    @Test("another Host is refused: a DNS-rebound page, another port, none, or two")
    func foreignHosts() {
        for host in ["evil.example:9100", "127.0.0.1:9101", "localhost:9100", "127.0.0.1", "auth.example.com", ""] {
            #expect(throws: ForwardingRules.Refusal.self, "\(host)") { try rules.upstreamHead(for: head("/", host: host)).get() }
        }
        #expect(throws: ForwardingRules.Refusal.self) { try rules.upstreamHead(for: head("/", host: nil)).get() }
        #expect(throws: ForwardingRules.Refusal.self) {
            try rules.upstreamHead(for: head("/", host: "127.0.0.1:9100", extra: [("Host", "127.0.0.1:9100")])).get()
        }
        #expect((try? rules.upstreamHead(for: head("/", host: "127.0.0.1:9100")).get()) != nil)
    }

    @Test("not an open proxy: absolute URLs, scheme-relative paths and CONNECT are refused")
    func notAProxy() {
        for uri in ["http://169.254.169.254/latest/meta-data", "//evil.example/x", "*", "evil.example:443"] {
            #expect(throws: ForwardingRules.Refusal.self, "\(uri)") { try rules.upstreamHead(for: head(uri, host: "127.0.0.1:9100")).get() }
        }
        #expect(throws: ForwardingRules.Refusal.self) {
            try rules.upstreamHead(for: head("/", host: "127.0.0.1:9100", method: .CONNECT)).get()
        }
    }

    @Test("responses lose the upstream connection's headers; a closing client is told so")
    func responses() {
        let upstream = HTTPResponseHead(
            version: .http1_1, status: .ok,
            headers: HTTPHeaders([("Content-Length", "5"), ("Connection", "keep-alive"), ("Keep-Alive", "timeout=60"), ("Set-Cookie", "a=b")]))
        let kept = rules.clientHead(for: upstream, closing: false)
        #expect(kept.headers["content-length"] == ["5"] && kept.headers["set-cookie"] == ["a=b"])
        #expect(kept.headers["connection"].isEmpty && kept.headers["keep-alive"].isEmpty)
        #expect(rules.clientHead(for: upstream, closing: true).headers["connection"] == ["close"])
    }

    @Test("the bridge's own answers are Firebase's error envelope, valid JSON")
    func envelope() throws {
        let reply = BridgeReply.unavailable(.untrusted("certificate \"verify\" failed\n"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
        let error = try #require(json["error"] as? [String: Any])
        #expect(error["code"] as? Int == 503 && error["status"] as? String == "UNAVAILABLE")
        #expect((error["message"] as? String)?.hasPrefix("UNAVAILABLE : the upstream's TLS certificate was refused") == true)
        #expect(BridgeReply.unavailable(.timedOut).status == .gatewayTimeout)
        #expect(BridgeReply.refused(.foreignHost("evil.example"), listenAuthority: "127.0.0.1:1").status == .forbidden)
    }

    @Test("upstreams: https only, a host, no credentials or query; listening on loopback only")
    func configuration() throws {
        for bad in ["http://auth.example.com", "https://user:pw@auth.example.com", "https://auth.example.com/?x=1", "https:///x", "ftp://a"] {
            #expect(throws: BridgeError.self, "\(bad)") { try Upstream(bad) }
        }
        let upstream = try Upstream("https://[::1]:8443")
        #expect(upstream.host == "::1" && upstream.port == 8443 && upstream.authority == "[::1]:8443" && upstream.hostIsAddress)
        #expect(try Upstream("https://10.0.0.2").hostIsAddress && !(try Upstream("https://auth.example.com").hostIsAddress))
        for host in ["127.0.0.1", "127.1.2.3", "::1"] { #expect(ListenAddress.isLoopback(host)) }
        for host in ["0.0.0.0", "::", "10.0.0.1", "localhost", "127.0.0", "128.0.0.1"] { #expect(!ListenAddress.isLoopback(host), "\(host)") }
        var configuration = BridgeConfiguration(upstream: upstream)
        configuration.listenHost = "0.0.0.0"
        #expect(throws: BridgeError.listenNotLoopback("0.0.0.0")) { try configuration.validate() }
    }
}
