import Foundation
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// `GET /__/auth/handler`, where the SDKs' headful OAuth flows go, as Firebase's auth domain
/// serves it. Opened by the SDK (`apiKey`, `providerId`, `sessionId` hash, `eventId`, the app),
/// it records a pending sign-in and redirects to the provider; the provider redirects back here
/// with `code` and `state`, and the page hands that URL to the app (the iOS deep link or the
/// Android intent), whose `signInWithIdp` then has the code exchanged. Failures go back to the
/// app as `firebaseError` once the app is known; before that, a plain error page.
struct OAuthHandlerPage: Sendable {
    let signIn: SignInService
    let access: APIAccess
    /// This server's public base URL (`publicUrl`): the provider's `redirect_uri` is
    /// `<publicUrl>/__/auth/handler`. Without it (development) the request's own host.
    let publicURL: String?

    func handle(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let query = QueryString(request).values
        let origin = publicURL ?? request.baseURL
        if let state = query["state"] { return callback(state, query, origin: origin) }
        return try await start(query, origin: origin, request, context)
    }

    private func start(
        _ query: [String: String], origin: String, _ request: Request, _ context: some RemoteAddressRequestContext
    ) async throws -> Response {
        guard publicURL != nil || access.profile == .development else {
            return page(.badRequest, "This server has no publicUrl setting, so providers can not be sent back to it.")
        }
        guard let apiKey = query["apiKey"], !apiKey.isEmpty, let providerId = query["providerId"], !providerId.isEmpty,
            let sessionHash = query["sessionId"], sessionHash.utf8.count == 64, sessionHash.utf8.allSatisfy(Self.isHexDigit),
            let eventId = query["eventId"], (1...128).contains(eventId.utf8.count)
        else { return page(.badRequest, "The sign-in request lacks apiKey, providerId, sessionId or eventId.") }
        // Web popups and redirects need an iframe relay Hearth does not serve yet.
        guard let app = AppReturn(query) else {
            return page(.badRequest, "Hearth finishes headful sign-in for the iOS and Android SDKs (ibi or apn).")
        }
        let authType = query["authType"] ?? "signInWithRedirect"
        // What a pending sign-in keeps is bounded, so an unauthenticated caller can not fill memory.
        let scopes = (query["scopes"] ?? "").split(separator: ",").map { String($0) }
        let customParameters = query["customParameters"].flatMap { JSONValue.parse(Array($0.utf8))?.objectValue } ?? [:]
        guard authType.utf8.count <= 32, (query["hl"]?.utf8.count ?? 0) <= 16, scopes.count <= 20,
            scopes.allSatisfy({ $0.utf8.count <= 128 }), customParameters.count <= 20,
            customParameters.allSatisfy({ $0.key.utf8.count <= 64 && ($0.value.stringValue?.utf8.count ?? 0) <= 512 }),
            AppReturn.parameters(query).values.allSatisfy({ $0.utf8.count <= 256 })
        else { return page(.badRequest, "The sign-in request's scopes, parameters or app names are too long or too many.") }
        let caller: Caller
        do {
            caller = try access.caller(apiKey: apiKey, request, context)
        } catch is FirebaseError {
            return page(.badRequest, "The sign-in request's API key is not valid.")
        }
        do {
            let start = HeadfulRequest(
                apiKey: apiKey, providerId: ProviderID(providerId), sessionHash: sessionHash, eventId: eventId,
                authType: authType, app: AppReturn.parameters(query), redirectURI: origin + "/__/auth/handler",
                scopes: scopes, customParameters: customParameters.compactMapValues(\.stringValue), language: query["hl"])
            let authorization = try await signIn.startHeadfulSignIn(start, caller)
            return Response(status: .found, headers: [.location: authorization, .cacheControl: "no-store"])
        } catch let error as FirebaseError {
            if error.code == "TOO_MANY_ATTEMPTS_TRY_LATER" {
                return page(.tooManyRequests, "Too many sign-ins were started from this address. Try again later.")
            }
            // The error goes to the app only if the project registered it (production): a link
            // to any scheme a stranger names would open whatever handles it.
            guard signIn.mayReturnHeadfulResult(to: AppReturn.parameters(query), caller) else {
                return page(.badRequest, "This app is not registered for the project: the sign-in can not return to it.")
            }
            let link = app.link(
                .error(code: "auth/operation-not-allowed", message: error.message), authType: authType, eventId: eventId, origin: origin)
            return Response(status: .found, headers: [.location: link, .cacheControl: "no-store"])
        }
    }

    private func callback(_ state: String, _ query: [String: String], origin: String) -> Response {
        guard let pending = signIn.pendingSignIns.peek(state, now: signIn.now), let app = AppReturn(pending.request.app) else {
            return page(.badRequest, "This sign-in has expired or was already completed. Start it again from the app.")
        }
        let result: AppReturn.Result
        if let error = query["error"] {
            // Consent denied, a bad scope: the provider's reason goes to the app. The state is left
            // to expire (whoever saw it must not be able to cancel someone else's sign-in).
            let detail = query["error_description"].map { "\(error): \($0)" } ?? error
            result = .error(code: "auth/invalid-credential", message: "\(pending.request.providerId): \(detail)")
        } else {
            let parameters = query.filter { ["code", "state"].contains($0.key) }.sorted { $0.key < $1.key }
            result = .response(origin + "/__/auth/handler?" + FormEncoding.encode(parameters.map { ($0.key, $0.value) }))
        }
        let link = app.link(result, authType: pending.request.authType, eventId: pending.request.eventId, origin: origin)
        return Response(status: .found, headers: [.location: link, .cacheControl: "no-store"])
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private func page(_ status: HTTPResponse.Status, _ message: String) -> Response {
        HTMLPage.response(status, title: "Sign-in", body: "<p>" + message + "</p>")
    }
}
