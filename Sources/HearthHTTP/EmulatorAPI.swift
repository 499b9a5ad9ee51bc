import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The Auth Emulator's own routes (development profile only): wipe a project's accounts,
/// list the codes "sent", read and change the project's sign-in config.
struct EmulatorAPI: Sendable {
    let projects: ProjectService
    let accounts: AccountService
    let actionCodes: ActionCodeService
    let access: APIAccess

    /// The emulator's routes take no credential, as the emulator's: so not from a web page (an
    /// `Origin`), which would let any site a developer visits read their codes or wipe their
    /// accounts, unless the developer allowed it (`developmentBrowserAdmin`).
    func caller(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Caller {
        if request.headers[.origin] != nil, !access.ownerFromBrowsers { throw FirebaseError.ownerFromBrowser }
        guard let project = context.parameters.get("project").flatMap(ProjectID.init) else {
            throw FirebaseError.bad("INVALID_PROJECT_ID")
        }
        return context.developmentCaller(project: project, isAdmin: true)
    }

    func deleteAccounts(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        _ = try await accounts.deleteAllAccounts(try caller(request, context))
        return JSONResponse.ok([:])
    }

    func oobCodes(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        let caller = try caller(request, context)
        let links = try actionCodes.pendingActionLinks(caller)
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
        let caller = try caller(request, context)
        // The emulator's two settings, in the v2 config's shape and update rules.
        let mask = "signIn.allowDuplicateEmails,emailPrivacyConfig.enableImprovedEmailPrivacy"
        let config: ProjectConfig
        if request.method == .patch {
            let fields = try await RequestFields.read(request)
            // Only the fields the body sets change, as in the emulator.
            let sent = mask.split(separator: ",").filter { path in
                let parts = path.split(separator: ".").map(String.init)
                return fields.values[parts[0]]?.objectValue?[parts[1]] != nil
            }
            config =
                sent.isEmpty
                ? try projects.config(caller)
                : try await projects.updateConfig(caller) { current in
                    try ProjectConfigJSON.apply(.object(fields.values), updateMask: sent.joined(separator: ","), to: current)
                }
        } else {
            config = try projects.config(caller)
        }
        return JSONResponse.ok([
            "signIn": ["allowDuplicateEmails": .bool(!config.oneAccountPerEmail)],
            "emailPrivacyConfig": ["enableImprovedEmailPrivacy": .bool(config.improvedEmailPrivacy)],
        ])
    }
}
