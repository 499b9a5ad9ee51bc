import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// Hearth's own admin route for erasure on request (no Firebase API has one):
/// `POST /hearth/v1/projects/{p}/accounts/{uid}/erase` with `{"reason": "..."}`. The account's
/// personal data is forgotten and the account ends; the admin and the reason are recorded.
/// `plainTextHistoryRemains`: the ledger still holds events from before sealing (`hearth ledger
/// seal` has not run), whose plain text no erasure reaches.
public struct ErasureAPI: Sendable {
    let accounts: AccountService
    let access: APIAccess

    func erase(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let project = context.parameters.get("project").map { Substring($0) }
        let caller = try access.resolve(request, context, query: QueryString(request), pathProject: project).caller
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        guard let uid = context.parameters.get("uid").flatMap(UserID.init) else { throw FirebaseError.bad("USER_NOT_FOUND") }
        let fields = try await RequestFields.read(request, limit: 4096)
        guard let reason = try fields.string("reason") else { throw FirebaseError.invalidArgument("/reason is required") }
        let erased = try await accounts.erase(uid, reason: reason, caller)
        return JSONResponse.ok(
            .object([
                "localId": .string(uid.rawValue), "erased": .bool(true),
                "plainTextHistoryRemains": .bool(erased.plainTextHistoryRemains),
            ]))
    }
}
