import HTTPTypes
import HearthAuth
import HearthDomain
import Hummingbird

/// The operator's choice of project: a credential for every project looks at one at a time,
/// kept in its session. A project-scoped credential has nothing to choose.
extension ConsoleAPI {
    /// The projects to choose among: those with settings of their own, those the API keys
    /// name, the default one and the one shown.
    func projectChoices(_ visitor: Visitor) throws -> [ProjectID] {
        var projects = Set(try projects.configuredProjects(visitor.caller))
        projects.formUnion(access.apiKeys.values)
        projects.insert(access.defaultProject)
        projects.insert(visitor.caller.project)
        return projects.sorted { $0.rawValue < $1.rawValue }
    }

    /// `POST /console/project-choice`: look at another project.
    func chooseProject(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard let (visitor, form) = try await change(request, context) else { return ConsolePage.refused() }
        guard let project = form["project"].flatMap(ProjectID.init), visitor.identity.scope.covers(project) else {
            return ConsolePage.refused()
        }
        var session = visitor.session
        session.project = project.rawValue
        return Response(
            status: .seeOther,
            headers: [
                .location: "/console", .cacheControl: "no-store",
                .setCookie: ConsoleSession.cookie(try session.sealed(by: secrets), secure: secureCookies),
            ])
    }
}
