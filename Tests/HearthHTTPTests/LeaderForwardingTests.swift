import HTTPTypes
import HearthAuth
import HearthDomain
import Hummingbird
import NIOCore
import Testing

@testable import HearthHTTP

/// A follower forwards to its leader what only the leader can answer, naming the client; the
/// leader believes that name only with the cluster's credential.
@Suite("HTTP: forwarding a follower's requests to the leader")
struct LeaderForwardingTests {
    static let token = "Xq3Lm8Rt1Vz6Kp0Wn4Hb7Jd2Fs5Gc9Ya"

    static func request(_ headers: [String: String]) -> Request {
        var fields = HTTPFields()
        for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
        let head = HTTPRequest(
            method: .post, scheme: "http", authority: "n1", path: "/identitytoolkit.googleapis.com/v1/accounts:signUp", headerFields: fields
        )
        return Request(head: head, body: RequestBody(buffer: ByteBuffer()))
    }

    @Test("the client a follower names counts only with the cluster's credential, and only when it is an address")
    func clientAddress() {
        var access = APIAccess.development(project: ProjectID("p")!)
        let forwarded = ["Hearth-Forwarded-For": "203.0.113.9", "Hearth-Forwarding-Token": Self.token]
        // A node outside a cluster believes no one.
        #expect(access.clientAddress(Self.request(forwarded), peer: "10.0.0.2") == "10.0.0.2")
        access.trustForwarding(by: Self.token)
        #expect(access.clientAddress(Self.request(forwarded), peer: "10.0.0.2") == "203.0.113.9")
        #expect(
            access.clientAddress(
                Self.request(["Hearth-Forwarded-For": "203.0.113.9", "Hearth-Forwarding-Token": String(Self.token.dropLast()) + "b"]),
                peer: "10.0.0.2") == "10.0.0.2")
        #expect(access.clientAddress(Self.request(["Hearth-Forwarded-For": "203.0.113.9"]), peer: "10.0.0.2") == "10.0.0.2")
        #expect(
            access.clientAddress(
                Self.request(["Hearth-Forwarded-For": "not an address", "Hearth-Forwarding-Token": Self.token]), peer: "10.0.0.2")
                == "10.0.0.2")
    }

    @Test("forwarded: a write a follower refuses, and a read that finds nothing; not: a refusal the leader would give too")
    func whatIsForwarded() {
        #expect(LeaderForwarding.isForwardable(.notLeader))
        #expect(LeaderForwarding.isForwardable(FirebaseError(AuthError.userNotFound)))
        #expect(LeaderForwarding.isForwardable(.bad("INVALID_REFRESH_TOKEN")))
        #expect(!LeaderForwarding.isForwardable(FirebaseError(AuthError.emailExists)))
        #expect(!LeaderForwarding.isForwardable(.bad("MISSING_PASSWORD")))
        #expect(!LeaderForwarding.isForwardable(.notReplicated))
        #expect(!LeaderForwarding.isForwardable(.invalidIdToken))
    }
}
