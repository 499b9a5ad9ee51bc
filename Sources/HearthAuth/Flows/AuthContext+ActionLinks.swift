import Foundation
import HearthCrypto
import HearthDomain
import HearthWire

/// What a link is built from besides its code: the server as the request reached it (for
/// `/emulator/action` links) and the API key the link carries to the app's handler.
public struct LinkOrigin: Sendable {
    public var baseURL: String
    public var apiKey: String

    public init(baseURL: String, apiKey: String) {
        self.baseURL = baseURL
        self.apiKey = apiKey
    }
}

/// Action links, shared by the flows that send them (codes, email recovery).
extension AuthContext {
    /// Room on the mail queue for one email, taken before anything is written; `nil` without
    /// email delivery (development keeps links in the outbox).
    func reserveEmail() throws -> (any ActionLinkDelivery)? {
        guard let mailer else { return nil }
        do {
            return try mailer.reserve()
        } catch {
            throw FirebaseError.bad("QUOTA_EXCEEDED : too many emails are waiting to be sent; try again later")
        }
    }

    /// A code's link, in the query shape of Firebase's action links.
    func actionLink(
        _ code: String, _ type: OOBCodeIssued.RequestType, _ project: ProjectID, email: String, newEmail: String?,
        handler: String, apiKey: String, continueUrl: String? = nil
    ) -> ActionLink {
        var query = "mode=\(type.linkMode)&lang=en&oobCode=\(code)&apiKey=\(FormEncoding.percentEncoded(apiKey))"
        if let continueUrl { query += "&continueUrl=\(FormEncoding.percentEncoded(continueUrl))" }
        return ActionLink(
            project: project, email: email, newEmail: newEmail, requestType: type, oobCode: code,
            oobLink: handler + (handler.contains("?") ? "&" : "?") + query)
    }

    /// The page links point at: the configured action handler, else the emulator's.
    func actionHandler(_ origin: LinkOrigin) throws -> String {
        if let actionURL = settings.actionURL { return actionURL }
        guard outbox != nil else {
            throw FirebaseError.bad("CONFIGURATION_NOT_FOUND : action links need actionUrl (the app's action handler)")
        }
        return origin.baseURL + "/emulator/action"
    }

    /// 32 random bytes, base64url: what the link carries. Only its hash is stored.
    static func newActionCode() -> String {
        Base64URL.encode(SecureRandom.bytes(32))
    }

    static func codeHash(_ code: String) -> String {
        sha256Hex(code)
    }
}

extension OOBCodeIssued.RequestType {
    /// Whether a code of this type is issued only if an address is, or is not, registered (a
    /// reset needs an account; a verify-before-change needs a free new address): what email
    /// enumeration protection withholds.
    var dependsOnRegistration: Bool { self == .passwordReset || self == .verifyAndChangeEmail }

    /// The `mode` of the action link, as Firebase's action handler reads it.
    public var linkMode: String {
        switch self {
        case .emailSignIn: "signIn"
        case .passwordReset: "resetPassword"
        case .verifyEmail: "verifyEmail"
        case .verifyAndChangeEmail: "verifyAndChangeEmail"
        case .recoverEmail: "recoverEmail"
        }
    }
}
