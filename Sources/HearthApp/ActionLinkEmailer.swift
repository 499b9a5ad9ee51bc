import HearthAuth
import HearthDomain
import HearthMail

/// Action links as emails on the SMTP queue: Firebase's default texts, from the configured sender.
struct ActionLinkEmailer: ActionLinkMailer {
    let queue: MailQueue
    let from: String
    let fromName: String?
    let appName: String?

    func send(_ link: ActionLink) throws {
        let appName = appName ?? link.project.rawValue
        let email = ActionEmail(link, appName: appName)
        try queue.enqueue(
            MailMessage(fromName: fromName ?? appName, fromAddress: from, to: email.to, subject: email.subject, text: email.text))
    }
}
