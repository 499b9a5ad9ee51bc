import Foundation
import HearthAuth
import HTTPTypes
import HearthDomain
import Hummingbird

/// Who may call, and for which project (DESIGN rule 8).
///
/// Development: any non-empty API key means the default project; `Bearer owner` is its admin.
/// Production: API keys are registered per project and admin needs a configured credential.
public struct APIAccess: Sendable {
    public enum Profile: String, Sendable, CaseIterable {
        case development, production
    }

    public var profile: Profile
    public var defaultProject: ProjectID
    /// Production: API key -> project.
    public var apiKeys: [String: ProjectID]
    /// Production: bearer tokens that grant admin access.
    public var adminTokens: Set<String>

    public init(
        profile: Profile, defaultProject: ProjectID, apiKeys: [String: ProjectID] = [:], adminTokens: Set<String> = []
    ) {
        self.profile = profile
        self.defaultProject = defaultProject
        self.apiKeys = apiKeys
        self.adminTokens = adminTokens
    }

    public static func development(project: ProjectID) -> APIAccess {
        APIAccess(profile: .development, defaultProject: project)
    }

    static let apiKeyHeader = HTTPField.Name("x-goog-api-key")!

    public struct Resolved: Sendable {
        public var caller: Caller
        public var apiKey: String?
    }

    /// Resolves the caller of `request`; `pathProject` is the `{p}` of `/v1/projects/{p}/...`.
    func resolve(_ request: Request, _ context: some RemoteAddressRequestContext, query: QueryString, pathProject: Substring?) throws
        -> Resolved
    {
        let apiKey = query["key"] ?? request.headers[Self.apiKeyHeader]
        let isAdmin = try isAdminBearer(request)
        var project: ProjectID
        if let pathProject {
            guard let parsed = ProjectID(String(pathProject)) else { throw FirebaseError.bad("INVALID_PROJECT_ID") }
            guard isAdmin else {
                throw FirebaseError.bad("INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")
            }
            project = parsed
        } else if isAdmin {
            project = defaultProject
        } else {
            guard let apiKey, !apiKey.isEmpty else { throw FirebaseError.missingAPIKey }
            project = try self.project(forKey: apiKey)
        }
        if profile == .production, isAdmin, pathProject == nil, let apiKey, let keyed = apiKeys[apiKey] { project = keyed }
        return Resolved(caller: context.caller(project: project, isAdmin: isAdmin), apiKey: apiKey)
    }

    /// The API key action links carry when the request had none (Admin SDK calls): one the
    /// project registered, or the emulator's placeholder in development.
    func linkKey(for project: ProjectID) -> String {
        apiKeys.filter { $0.value == project }.keys.min() ?? "fake-api-key"
    }

    private func project(forKey apiKey: String) throws -> ProjectID {
        switch profile {
        case .development: return defaultProject
        case .production:
            guard let project = apiKeys[apiKey] else {
                throw FirebaseError(
                    message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT", reason: "badRequest")
            }
            return project
        }
    }

    /// `Authorization: Bearer <token>`; other schemes are ignored, an unknown bearer is a 401.
    private func isAdminBearer(_ request: Request) throws -> Bool {
        guard let header = request.headers[.authorization] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        let accepted =
            switch profile {
            case .development: token.lowercased() == "owner" || adminTokens.contains(token)
            case .production: adminTokens.contains(token)
            }
        guard accepted else { throw FirebaseError.invalidCredentials }
        return true
    }
}
