import HearthAuth
import HearthWire
import Testing

/// What an identity provider's URL may be (which addresses count as the public internet is
/// HearthWire's, tested there).
@Suite("provider URLs")
struct ProviderAddressTests {
    @Test("provider URLs: http or https with a host and no user info; issuers without query or fragment")
    func shapes() {
        for text in [
            "http+unix://%2Ftmp%2Fs.sock/token", "file:///etc/passwd", "https://user:pw@id.example", "https://", "id.example/x",
            "https://id.example/ x",
        ] {
            #expect((try? ProviderURL(text)) == nil, "\(text)")
        }
        for text in ["https://id.example/x?", "https://id.example#", "https://id.example/?a=b"] {
            #expect((try? ProviderURL.issuer(text)) == nil, "\(text)")
        }
        let url = try? ProviderURL.issuer("https://ID.Example:443/tenant")
        #expect(url?.host == "id.example" && url?.sameOrigin(try! ProviderURL("https://id.example/token")) == true)
        #expect((try? ProviderURL("http://[::1]:8080/x"))?.host == "::1")
    }
}
