import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The Auth Emulator's own routes (development profile only): wipe a project's accounts,
/// list the codes "sent", read and change the project's sign-in config.
struct EmulatorAPI: Sendable {
    let service: AuthService

    func caller(_ context: some RemoteAddressRequestContext) throws -> Caller {
        guard let project = context.parameters.get("project").flatMap(ProjectID.init) else {
            throw FirebaseError.bad("INVALID_PROJECT_ID")
        }
        return context.caller(project: project, isAdmin: true)
    }

    func deleteAccounts(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        _ = try await service.deleteAllAccounts(try caller(context))
        return JSONResponse.ok([:])
    }

    func oobCodes(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        let caller = try caller(context)
        let links = try service.pendingActionLinks(caller)
        return JSONResponse.ok([
            "oobCodes": .array(
                links.map { link in
                    var code: [String: JSONValue] = [
                        "email": .string(link.email), "requestType": .string(link.requestType.rawValue),
                        "oobCode": .string(link.oobCode), "oobLink": .string(link.oobLink),
                    ]
                    if let newEmail = link.newEmail { code["newEmail"] = .string(newEmail) }
                    return .object(code)
                })
        ])
    }

    func config(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let caller = try caller(context)
        if request.method == .patch {
            let fields = try await RequestFields.read(request)
            if let signIn = fields.values["signIn"]?.objectValue {
                let allowDuplicates = try RequestFields(signIn).bool("allowDuplicateEmails")
                try await service.changeConfig(
                    ProjectConfigChange(oneAccountPerEmail: allowDuplicates.map { !$0 }), caller)
            }
        }
        let config = try service.config(caller)
        return JSONResponse.ok([
            "signIn": ["allowDuplicateEmails": .bool(!config.oneAccountPerEmail)],
            "emailPrivacyConfig": ["enableImprovedEmailPrivacy": false],
        ])
    }
}
