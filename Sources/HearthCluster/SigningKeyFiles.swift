import AsyncHTTPClient
import Foundation
import HearthDomain
import HearthStore
import NIOCore
import NIOHTTP1

/// A rotated signing key's private half, from the leader that made it to each follower, over
/// the replication channel: `GET /hearth/v1/cluster/signing-key?kid=<kid>` with the cluster's
/// credential. The ledger names the key (`signing_key.published`); the file never enters it.
/// Only a key the ledger publishes is sent, never any other file.
public struct SigningKeyFiles: Sendable {
    let store: AccountStore
    let credential: ReplicationCredential

    public init(store: AccountStore, token: String) {
        self.store = store
        credential = ReplicationCredential(token: token)
    }

    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var body: [UInt8]
    }

    /// The leader's side: the PEM file of `keyID`, if the ledger publishes it.
    public func answer(keyID: String?, authorization: String?) -> Answer {
        guard credential.accepts(authorization) else { return Answer(status: 401, body: Array(ReplicationCredential.refusal.utf8)) }
        guard let keyID, SigningKeyRing.isKeyID(keyID) else { return Answer(status: 400, body: Array("kid: 40 hexadecimal digits".utf8)) }
        guard let ring = try? store.signingKeyRing().ring else {
            return Answer(status: 503, body: Array("the ledger can not be read".utf8))
        }
        guard ring.isLive(keyID), let data = FileManager.default.contents(atPath: store.directory.signingKeyFile(keyID: keyID)) else {
            return Answer(status: 404, body: Array("no such published key on this node".utf8))
        }
        return Answer(status: 200, body: Array(data))
    }

    /// The follower's side: fetches `keyID` from the leader at `leaderURL` into this node's
    /// data directory (owner-only, fsynced, whole or not at all).
    public func fetch(_ keyID: String, from leaderURL: String) async throws {
        guard SigningKeyRing.isKeyID(keyID) else { throw ReplicationRefused(status: 400, body: "kid \(keyID)") }
        var request = HTTPClientRequest(url: "\(leaderURL)/hearth/v1/cluster/signing-key?kid=\(keyID)")
        request.headers.add(name: "Authorization", value: "Bearer \(credential.token)")
        let response = try await ClusterHTTP.client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 << 10)
        guard response.status.code == 200 else {
            throw ReplicationRefused(status: Int(response.status.code), body: String(buffer: body))
        }
        try DurableFiles.writeAtomically(Array(body.readableBytesView), to: store.directory.signingKeyFile(keyID: keyID))
    }

    /// A leader's side, for a pending key whose file it lacks (elected before it fetched it
    /// from the node that made it, now gone): asks the other registered nodes in turn, each of
    /// which serves a key the ledger publishes if it holds the file. `.held` once one sent it;
    /// `.lost` when each answered that it holds none; `.sought` while some could not be asked
    /// (unreachable, or etcd unread): the next try asks again, and the rotation waits.
    public func fetch(_ keyID: String, fromAnyOf members: [MemberRecord]) async -> KeyFileAvailability {
        var unanswered = false
        for member in members {
            do {
                try await fetch(keyID, from: member.url)
                return .held
            } catch let refused as ReplicationRefused where refused.status == 404 {
                continue
            } catch {
                unanswered = true
            }
        }
        return unanswered ? .sought : .lost
    }
}
