import HearthDomain

/// The email that carries an action link: Firebase's default templates, in English.
public struct ActionEmail: Sendable, Equatable {
    public var to: String
    public var subject: String
    public var text: String

    /// `appName` stands where Firebase's templates say %APP_NAME%.
    public init(_ link: ActionLink, appName: String) {
        to = link.recipient
        let request: String
        let otherwise: String
        switch link.requestType {
        case .passwordReset:
            subject = "Reset your password for \(appName)"
            request = "Follow this link to reset your \(appName) password for your \(link.email) account."
            otherwise = "If you didn't ask to reset your password, you can ignore this email."
        case .verifyEmail:
            subject = "Verify your email for \(appName)"
            request = "Follow this link to verify your email address."
            otherwise = "If you didn't ask to verify this address, you can ignore this email."
        case .verifyAndChangeEmail:
            subject = "Verify your new email for \(appName)"
            request =
                "Follow this link to verify \(link.recipient) as the new email address of your \(appName) account (now \(link.email))."
            otherwise = "If you didn't ask to change your email address, you can ignore this email."
        case .recoverEmail:
            subject = "Your sign-in email was changed for \(appName)"
            request =
                "Your sign-in email for \(appName) was changed to \(link.newEmail ?? "another address"). If you didn't ask to change your email, follow this link to reset your sign-in email."
            otherwise = "If you changed it yourself, you can ignore this email."
        case .emailSignIn:
            subject = "Sign in to \(appName)"
            request =
                "We received a request to sign in to \(appName) using this email address. If you want to sign in with your \(link.email) account, click this link:"
            otherwise = "If you did not request this link, you can safely ignore this email."
        }
        text = "Hello,\n\n\(request)\n\n\(link.oobLink)\n\n\(otherwise)\n\nThanks,\n\nYour \(appName) team\n"
    }
}
