import Foundation
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// `GET /emulator/action`: where development action links point, standing in for Firebase's
/// hosted action page. Sign-in links redirect to the app; the other modes use the code here and
/// answer in the emulator's `{"authEmulator": ...}` shape (or redirect to `continueUrl`).
struct EmulatorActionPage: Sendable {
    let actionCodes: ActionCodeService
    let project: ProjectID

    func handle(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        let query = QueryString(request).values
        guard query["apiKey"].map({ !$0.isEmpty }) == true else {
            return Self.failure(
                "missing apiKey query parameter", "Please modify the URL to specify an apiKey, such as ...&apiKey=YOUR_API_KEY")
        }
        guard let oobCode = query["oobCode"], !oobCode.isEmpty else {
            return Self.failure(
                "missing oobCode query parameter", "Please modify the URL to specify an oobCode, such as ...&oobCode=YOUR_OOB_CODE")
        }
        let caller = context.developmentCaller(project: project, isAdmin: false)
        // The page redirects there: a `javascript:` URL would run as this origin.
        let continueTarget: URLComponents?
        switch query["continueUrl"] {
        case nil, "": continueTarget = nil
        case let text?:
            guard let valid = try? Validation.continueURL(text) else {
                return Self.failure("Invalid continueUrl query parameter", "The continue URL must be an absolute http or https URL.")
            }
            continueTarget = valid
        }
        let continueUrl = continueTarget == nil ? nil : query["continueUrl"]
        switch query["mode"] {
        case "signIn":
            // The app completes the sign-in (it must know the email); the code is not used here.
            guard var target = continueTarget else {
                return Self.failure("Missing continueUrl query parameter", "To sign in, append &continueUrl=YOUR_APP_URL to the link.")
            }
            let carried = query.filter { $0.key != "continueUrl" }.sorted { $0.key < $1.key }
            target.queryItems =
                (target.queryItems ?? []).filter { item in query[item.name] == nil }
                + carried.map { URLQueryItem(name: $0.key, value: $0.value) }
            return Self.redirect(target.string ?? query["continueUrl"] ?? "")
        case "resetPassword":
            return try await resetPassword(oobCode, newPassword: query["newPassword"], continueUrl, request, caller)
        case "recoverEmail":
            return try await recoverEmail(oobCode, caller)
        case "verifyEmail", "verifyAndChangeEmail":
            let changing = query["mode"] == "verifyAndChangeEmail"
            let origin = LinkOrigin(baseURL: request.baseURL, apiKey: query["apiKey"] ?? "")
            guard let info = try await Self.unlessSpent({ try await actionCodes.applyActionCode(oobCode, caller, origin: origin).1 }) else {
                return changing
                    ? Self.failure(
                        "Your request to change your email has expired or the link has already been used.", "Try changing your email again."
                    )
                    : Self.failure(
                        "Your request to verify your email has expired or the link has already been used.",
                        "Try verifying your email again.")
            }
            if let continueUrl { return Self.redirect(continueUrl) }
            return changing
                ? Self.success("The email has been successfully changed.", ["newEmail": .string(info.newEmail ?? info.email)])
                : Self.success("The email has been successfully verified.", ["email": .string(info.email)])
        default:
            return JSONResponse.make(.badRequest, ["authEmulator": ["error": "Invalid mode"]])
        }
    }

    private func resetPassword(
        _ oobCode: String, newPassword: String?, _ continueUrl: String?, _ request: Request, _ caller: Caller
    ) async throws -> Response {
        guard let info = try await Self.unlessSpent({ try await actionCodes.resetPassword(oobCode: oobCode, newPassword: nil, caller) }),
            info.requestType == .passwordReset
        else {
            return Self.failure(
                "Your request to reset your password has expired or the link has already been used.", "Try resetting your password again.")
        }
        let link = request.baseURL + "\(request.uri)"
        let template = link + "&newPassword=NEW_PASSWORD_HERE"
        guard let newPassword, !newPassword.isEmpty, newPassword != "NEW_PASSWORD_HERE" else {
            return JSONResponse.make(
                .badRequest,
                [
                    "authEmulator": [
                        "error": newPassword == nil
                            ? "missing newPassword query parameter" : "newPassword must be something other than 'NEW_PASSWORD_HERE'",
                        "instructions": .string("To reset the password for \(info.email), send an HTTP GET request to the following URL."),
                        "urlTemplate": .string(template),
                    ]
                ])
        }
        // A weak password is the API's own 400 (WEAK_PASSWORD), as in the emulator.
        _ = try await actionCodes.resetPassword(oobCode: oobCode, newPassword: newPassword, caller)
        return continueUrl.map(Self.redirect) ?? Self.success("The password has been successfully updated.", ["email": .string(info.email)])
    }

    private func recoverEmail(_ oobCode: String, _ caller: Caller) async throws -> Response {
        let spent = Self.failure(
            "Your request to revert your email has expired or the link has already been used.", "Try signing in with your email again.")
        guard let info = try await Self.unlessSpent({ try await actionCodes.resetPassword(oobCode: oobCode, newPassword: nil, caller) })
        else { return spent }
        guard info.requestType == .recoverEmail else {
            return Self.failure("Requested mode does not match the OOB code provided.", "Check the link you followed.")
        }
        guard try await Self.unlessSpent({ try await actionCodes.applyActionCode(oobCode, caller) }) != nil else { return spent }
        return Self.success("The email has been successfully reset.", ["email": .string(info.email)])
    }

    /// `use()`'s result, or `nil` when the code is unknown, used or expired (the page's own 400).
    /// Any other refusal (EMAIL_EXISTS, WEAK_PASSWORD) stays the API's error.
    private static func unlessSpent<T>(_ use: () async throws -> T) async throws -> T? {
        do {
            return try await use()
        } catch let error as FirebaseError where ["INVALID_OOB_CODE", "EXPIRED_OOB_CODE"].contains(error.code) {
            return nil
        }
    }

    private static func failure(_ error: String, _ instructions: String) -> Response {
        JSONResponse.make(.badRequest, ["authEmulator": ["error": .string(error), "instructions": .string(instructions)]])
    }

    private static func success(_ message: String, _ details: [String: JSONValue]) -> Response {
        JSONResponse.ok(["authEmulator": .object(details.merging(["success": .string(message)]) { current, _ in current })])
    }

    private static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }
}
