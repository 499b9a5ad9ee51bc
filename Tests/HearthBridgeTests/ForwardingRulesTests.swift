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

    @Test("a chunked body goes upstream under exactly `chunked`, whatever the client spelled; TRACE and dot segments are refused")
    func framing() throws {
        for spelling in ["Chunked", "gzip, chunked", "chunked"] {
            let forwarded = try rules.upstreamHead(
                for: head("/x", host: "127.0.0.1:9100", method: .GET, extra: [("Transfer-Encoding", spelling)])
            ).get()
            #expect(forwarded.headers["transfer-encoding"] == ["chunked"] && forwarded.headers["content-length"].isEmpty, "\(spelling)")
        }
        #expect(throws: ForwardingRules.Refusal.self) {
            try rules.upstreamHead(for: head("/", host: "127.0.0.1:9100", method: .TRACE)).get()
        }
        for uri in ["/../admin", "/a/./b", "/a/%2E%2e/b", "/a/..", "/%2e/x?y=1"] {
            #expect(throws: ForwardingRules.Refusal.self, "\(uri)") { try rules.upstreamHead(for: head(uri, host: "127.0.0.1:9100")).get() }
        }
        for uri in ["/a..b/c", "/x?next=/../y", "/.well-known/jwks.json"] {
            #expect(throws: Never.self, "\(uri)") { try rules.upstreamHead(for: head(uri, host: "127.0.0.1:9100")).get() }
        }
        #expect(try Upstream("https://example.com/a%20b/").pathPrefix == "/a%20b")
        #expect(throws: BridgeError.self) { try Upstream("https://example.com/a/../b") }
    }

    @Test("responses lose the upstream connection's headers; a closing client is told so")
    func responses() {
        let upstream = HTTPResponseHead(
            version: .http1_1, status: .ok,
            headers: HTTPHeaders([
                ("Content-Length", "5"), ("Connection", "keep-alive"), ("Keep-Alive", "timeout=60"), ("Set-Cookie", "a=b"),
            ]))
        let kept = rules.clientHead(for: upstream, closing: false)
        #expect(kept.headers["content-length"] == ["5"] && kept.headers["set-cookie"] == ["a=b"])
        #expect(kept.headers["connection"].isEmpty && kept.headers["keep-alive"].isEmpty)
        #expect(rules.clientHead(for: upstream, closing: true).headers["connection"] == ["close"])
    }

    @Test("the bridge's own answers are Firebase's error envelope, valid JSON")
    func envelope() throws {
        let reply = BridgeReply.unavailable(.untrusted("certificate \"verify\" failed\n"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
        let error = try #require(json["error"] as? [String: Any])
        #expect(error["code"] as? Int == 503 && error["status"] as? String == "UNAVAILABLE")
        #expect((error["message"] as? String)?.hasPrefix("UNAVAILABLE : the upstream's TLS certificate was refused") == true)
        #expect(BridgeReply.unavailable(.timedOut).status == .gatewayTimeout)
        #expect(BridgeReply.refused(.foreignHost("evil.example"), listenAuthority: "127.0.0.1:1").status == .forbidden)
    }

    @Test("upstreams: https only, a host, no credentials or query; listening on loopback only")
    func configuration() throws {
        for bad in [
            "http://auth.example.com", "https://user:pw@auth.example.com", "https://auth.example.com/?x=1", "https:///x", "ftp://a",
        ] {
            #expect(throws: BridgeError.self, "\(bad)") { try Upstream(bad) }
        }
        let upstream = try Upstream("https://[::1]:8443")
        #expect(upstream.host == "::1" && upstream.port == 8443 && upstream.authority == "[::1]:8443" && upstream.hostIsAddress)
        #expect(try Upstream("https://10.0.0.2").hostIsAddress && !(try Upstream("https://auth.example.com").hostIsAddress))
        func listening(on host: String) -> BridgeConfiguration {
            var configuration = BridgeConfiguration(upstream: upstream)
            configuration.listenHost = host
            return configuration
        }
        for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]"] {
            #expect(throws: Never.self, "\(host)") { try listening(on: host).validate() }
        }
        for host in ["0.0.0.0", "::", "10.0.0.1", "localhost", "127.0.0", "128.0.0.1"] {
            #expect(throws: BridgeError.listenNotLoopback(host), "\(host)") { try listening(on: host).validate() }
        }
    }
}

@Suite("the Admin SDK sidecar: Bearer owner exchanged, for the users allowed")
struct EmulatorAdminTests {
    @Test("exactly `Bearer owner` becomes the admin token; any other credential passes as it is")
    func exchange() throws {
        let rules = ForwardingRules(
            upstream: try Upstream("https://auth.example.com"), listenHost: "127.0.0.1", listenPort: 9100, adminToken: "real-token")
        func authorization(_ value: String) throws -> [String] {
            var headers = HTTPHeaders([("Host", "127.0.0.1:9100")])
            headers.add(name: "Authorization", value: value)
            return try rules.upstreamHead(for: HTTPRequestHead(version: .http1_1, method: .POST, uri: "/", headers: headers)).get()
                .headers["authorization"]
        }
        #expect(try authorization("Bearer owner") == ["Bearer real-token"])
        #expect(try authorization("Bearer ya29.other") == ["Bearer ya29.other"])
        #expect(try authorization("Bearer owner2") == ["Bearer owner2"])
        let plain = ForwardingRules(upstream: try Upstream("https://auth.example.com"), listenHost: "127.0.0.1", listenPort: 9100)
        var headers = HTTPHeaders([("Host", "127.0.0.1:9100"), ("Authorization", "Bearer owner")])
        headers.add(name: "X", value: "y")
        #expect(
            try plain.upstreamHead(for: HTTPRequestHead(version: .http1_1, method: .POST, uri: "/", headers: headers)).get().headers[
                "authorization"] == ["Bearer owner"])
    }

    @Test("the client's uid is read from the kernel's socket table, by both addresses")
    func peerOwner() throws {
        let server = try SocketAddress(ipAddress: "127.0.0.1", port: 9080)
        let client = try SocketAddress(ipAddress: "127.0.0.1", port: 51234)
        #expect(LoopbackPeer.key(server) == "0100007F:2378")
        #expect(LoopbackPeer.key(try SocketAddress(ipAddress: "::1", port: 443)) == "00000000000000000000000001000000:01BB")
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:2378 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
               1: 0100007F:2378 0100007F:C862 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1
               2: 0100007F:C862 0100007F:2378 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0 20 4 30 10 -1
            """
        #expect(LoopbackPeer.owner(in: table, client: "0100007F:C862", server: "0100007F:2378") == 1000)
        #expect(LoopbackPeer.owner(in: table, client: "0100007F:C863", server: "0100007F:2378") == nil)
        _ = client
    }
}
