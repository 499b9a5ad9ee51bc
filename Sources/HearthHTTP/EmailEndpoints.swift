import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire

/// sendOobCode and resetPassword: emailed action codes.
struct EmailEndpoints: Sendable {
    let actionCodes: ActionCodeService

    /// requestType by name, or by its proto enum index (the Android SDK sends 6).
    static let requestTypeIndexes: [Int64: String] = [
        1: "PASSWORD_RESET", 2: "OLD_EMAIL_AGREE", 3: "NEW_EMAIL_ACCEPT", 4: "VERIFY_EMAIL", 5: "RECOVER_EMAIL", 6: "EMAIL_SIGNIN",
        7: "VERIFY_AND_CHANGE_EMAIL",
    ]

    func sendOobCode(_ call: ToolkitCall) async throws -> JSONValue {
        let fields = call.fields
        let requestName: String? =
            if case .int(let index)? = fields.values["requestType"] { Self.requestTypeIndexes[index] } else {
                try fields.string("requestType")
            }
        guard let requestName, requestName != "OOB_REQ_TYPE_UNSPECIFIED" else { throw FirebaseError.bad("MISSING_REQ_TYPE") }
        let returnLink = try fields.bool("returnOobLink") ?? false
        guard !returnLink || call.caller.isAdmin else { throw FirebaseError.insufficientPermission }
        guard let requestType = OOBCodeIssued.RequestType(rawValue: requestName) else {
            throw FirebaseError.bad("OPERATION_NOT_ALLOWED : \(requestName) codes are not supported by this Hearth version")
        }
        var request = ActionCodeService.ActionLinkRequest(
            requestType: requestType, email: try fields.string("email"), newEmail: try fields.string("newEmail"),
            idToken: try fields.string("idToken"), returnsLink: returnLink, continueUrl: try fields.string("continueUrl"),
            origin: call.linkOrigin)
        request.app = try Self.appLinkSettings(fields)
        let sent = try await actionCodes.sendActionCode(request, call.caller)
        var body: [String: JSONValue] = ["kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": .string(sent.email)]
        if returnLink, let link = sent.link {
            body["oobCode"] = .string(link.oobCode)
            body["oobLink"] = .string(link.oobLink)
        }
        return .object(body)
    }

    /// ActionCodeSettings' app fields, as the SDKs send them (the JS SDK names the Android
    /// minimum version `androidMinimumVersionCode`).
    static func appLinkSettings(_ fields: RequestFields) throws -> AppLinkSettings {
        var app = AppLinkSettings()
        app.canHandleCodeInApp = try fields.bool("canHandleCodeInApp") ?? false
        app.iOSBundleId = try fields.string("iOSBundleId", maxBytes: 256)
        app.iOSAppStoreId = try fields.string("iOSAppStoreId", maxBytes: 64)
        app.androidPackageName = try fields.string("androidPackageName", maxBytes: 256)
        app.androidInstallApp = try fields.bool("androidInstallApp") ?? false
        app.androidMinimumVersion =
            try fields.string("androidMinimumVersion", maxBytes: 32) ?? fields.string("androidMinimumVersionCode", maxBytes: 32)
        app.linkDomain = try fields.string("linkDomain", maxBytes: 253)
        app.dynamicLinkDomain = try fields.string("dynamicLinkDomain", maxBytes: 253)
        return app
    }

    /// checkActionCode / verifyPasswordResetCode (no `newPassword`), confirmPasswordReset.
    func resetPassword(_ call: ToolkitCall) async throws -> JSONValue {
        let info = try await actionCodes.resetPassword(
            oobCode: try call.fields.string("oobCode"), newPassword: try call.fields.string("newPassword"), call.caller)
        var body: [String: JSONValue] = [
            "kind": "identitytoolkit#ResetPasswordResponse", "requestType": .string(info.requestType.rawValue),
        ]
        // A sign-in code's email is not revealed: whoever completes it must know the address.
        if info.requestType != .emailSignIn { body["email"] = .string(info.email) }
        if let newEmail = info.newEmail { body["newEmail"] = .string(newEmail) }
        return .object(body)
    }
}
