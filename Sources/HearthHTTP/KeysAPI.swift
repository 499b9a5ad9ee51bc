import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// Hearth's own operator routes for the signing keys (`hearth keys status|rotate`):
/// `GET /hearth/v1/keys` (the key signing, those the JWKS publishes, a rotation under way) and
/// `POST /hearth/v1/keys/rotate` with `{"overlapSeconds", "retireAfterSeconds"}` (both optional).
/// The operator's credential only (keys are every project's); a rotation is a write, so a
/// follower forwards it to its leader.
public struct KeysAPI: Sendable {
    let keys: KeyService
    let access: APIAccess

    func status(_ request: Request) throws -> Response {
        try requireOperator(request)
        return JSONResponse.ok(Self.render(try keys.status()))
    }

    func rotate(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let admin = try requireOperator(request)
        let fields = try await RequestFields.read(request, limit: 1024)
        let published = try await keys.rotate(
            overlapSeconds: try fields.int("overlapSeconds"), retireAfterSeconds: try fields.int("retireAfterSeconds"),
            metadata: Metadata(
                actor: .admin, actorId: admin, requestId: context.id,
                clientIp: access.clientAddress(request, peer: context.clientIp)))
        return JSONResponse.ok(Self.render(published))
    }

    @discardableResult
    private func requireOperator(_ request: Request) throws -> String {
        guard let admin = try access.admin(request) else { throw FirebaseError.invalidCredentials }
        guard admin.scope == .everyProject else { throw FirebaseError.insufficientPermission }
        return admin.name
    }

    static func render(_ published: SigningKeyPublished) -> JSONValue {
        [
            "keyId": .string(published.keyId), "algorithm": .string(published.algorithm), "replaces": .string(published.replaces),
            "activatesAt": .int(published.activatesAt), "retireAfterSeconds": .int(published.retireAfterSeconds),
        ]
    }

    static func render(_ status: KeyService.Status) -> JSONValue {
        var object: [String: JSONValue] = [
            "signing": status.signing.map { .string($0) } ?? .null, "published": .array(status.published.map { .string($0) }),
        ]
        if let pending = status.pending { object["rotation"] = render(pending) }
        if let next = status.nextStepAt { object["nextStepAt"] = .int(next) }
        return .object(object)
    }
}
