import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// Hearth's own admin routes for the 30-day anonymous auto-cleanup (no Firebase API has them):
/// `GET /hearth/v1/projects/{p}/cleanup` (status) and `.../cleanup/preview` (what turning it on
/// would schedule). Admin only; the answers are counts, bounded by the schedule's size.
public struct CleanupAPI: Sendable {
    let projects: ProjectService
    let access: APIAccess

    func status(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        JSONResponse.ok(CleanupJSON.render(try await projects.cleanupStatus(try admin(request, context))))
    }

    func preview(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        JSONResponse.ok(CleanupJSON.render(try await projects.cleanupPreview(try admin(request, context))))
    }

    private func admin(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Caller {
        let project = context.parameters.get("project").map { Substring($0) }
        let caller = try access.resolve(request, context, query: QueryString(request), pathProject: project).caller
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return caller
    }
}
