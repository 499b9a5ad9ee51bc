import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// Identity Platform's provider configurations, admin only:
/// `/v2/projects/{p}/defaultSupportedIdpConfigs[?idpId=]` and `/v2/projects/{p}/oauthIdpConfigs[?oauthIdpConfigId=]`
/// (list, create), and `.../{id}` (get, patch with `updateMask`, delete).
struct IdentityProviderAPI: Sendable {
    let projects: ProjectService
    let access: APIAccess
    let kind: IdentityProviderJSON.Kind

    func collection(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let (caller, query) = try admin(request, context)
        if request.method == .post {
            let name = kind == .defaultSupported ? "idpId" : "oauthIdpConfigId"
            let providerId = try IdentityProviderJSON.providerId(query[name], kind)
            let body = try await RequestFields.read(request).values
            let (kind, files) = (self.kind, secretFiles(caller))
            let secret = try IdentityProviderJSON.SecretInput.seal(body, with: projects.secrets)
            let created = try await projects.setIdentityProvider(providerId, creating: true, caller) { _ in
                try IdentityProviderJSON.apply(
                    body, updateMask: nil, to: nil, providerId: providerId, kind: kind, secret: secret, secretFiles: files)
            }
            return JSONResponse.ok(IdentityProviderJSON.render(created, project: caller.project))
        }
        let pageSize = query["pageSize"].flatMap { Int($0) }.map { min(max($0, 1), 100) } ?? 100
        let listed = try projects.identityProviders(caller).filter { provider in
            (provider.isOpenIDConnect == (kind == .openIDConnect)) && query["pageToken"].map { provider.providerId.rawValue > $0 } ?? true
        }
        let page = listed.prefix(pageSize)
        var body: [String: JSONValue] = [
            kind == .defaultSupported ? "defaultSupportedIdpConfigs" : "oauthIdpConfigs":
                .array(page.map { IdentityProviderJSON.render($0, project: caller.project) })
        ]
        if listed.count > pageSize, let last = page.last { body["nextPageToken"] = .string(last.providerId.rawValue) }
        return JSONResponse.ok(.object(body))
    }

    func item(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let (caller, query) = try admin(request, context)
        let providerId = try IdentityProviderJSON.providerId(context.parameters.get("idp"), kind)
        switch request.method {
        case .patch:
            let body = try await RequestFields.read(request).values
            let (kind, mask, files) = (self.kind, query["updateMask"], secretFiles(caller))
            let secret = try IdentityProviderJSON.SecretInput.seal(body, with: projects.secrets)
            let updated = try await projects.setIdentityProvider(providerId, creating: false, caller) { current in
                try IdentityProviderJSON.apply(
                    body, updateMask: mask, to: current, providerId: providerId, kind: kind, secret: secret, secretFiles: files)
            }
            return JSONResponse.ok(IdentityProviderJSON.render(updated, project: caller.project))
        case .delete:
            try await projects.deleteIdentityProvider(providerId, caller)
            return JSONResponse.ok([:])
        default:
            return JSONResponse.ok(IdentityProviderJSON.render(try projects.identityProvider(providerId, caller), project: caller.project))
        }
    }

    /// Which files the caller may have the daemon read for a provider's secret (none for a
    /// project's own admin).
    private func secretFiles(_ caller: Caller) -> IdentityProviderJSON.SecretFiles {
        caller.isOperator ? .within(projects.settings.secretFilesDirectory) : .operatorOnly
    }

    private func admin(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> (Caller, QueryString) {
        let query = QueryString(request)
        let caller = try access.resolve(
            request, context, query: query, pathProject: context.parameters.get("project").map { Substring($0) }
        ).caller
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return (caller, query)
    }
}
