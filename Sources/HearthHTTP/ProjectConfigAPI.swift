import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// Identity Platform's admin v2 project config: `GET` and `PATCH
/// /identitytoolkit.googleapis.com/v2/projects/{p}/config[?updateMask=...]`, admin only. Every
/// change is one `project.config_changed` event recording who made it.
struct ProjectConfigAPI: Sendable {
    let projects: ProjectService
    let access: APIAccess

    func handle(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let query = QueryString(request)
        let caller = try access.resolve(
            request, context, query: query, pathProject: context.parameters.get("project").map { Substring($0) }
        ).caller
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        let config: ProjectConfig
        if request.method == .patch {
            let fields = try await RequestFields.read(request)
            let body = JSONValue.object(fields.values)
            config = try await projects.updateConfig(caller) { current in
                try ProjectConfigJSON.apply(body, updateMask: query["updateMask"], to: current)
            }
        } else {
            config = try projects.config(caller)
        }
        return JSONResponse.ok(ProjectConfigJSON.render(config, project: caller.project))
    }
}
