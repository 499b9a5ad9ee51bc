import HearthAuth
import HearthDomain
import HearthMail

/// Action links as emails on the SMTP queue: Firebase's default texts, from the configured sender.
public struct ActionLinkEmailer: ActionLinkMailer {
    let queue: MailQueue
    let from: String
    let fromName: String?
    let appName: String?

    public init(queue: MailQueue, from: String, fromName: String? = nil, appName: String? = nil) {
        self.queue = queue
        self.from = from
        self.fromName = fromName
        self.appName = appName
    }

    public func reserve() throws -> any ActionLinkDelivery {
        Delivery(emailer: self, room: try queue.reserve())
    }

    func message(for link: ActionLink) -> MailMessage {
        let appName = appName ?? link.project.rawValue
        let email = ActionEmail(link, appName: appName)
        return MailMessage(fromName: fromName ?? appName, fromAddress: from, to: email.to, subject: email.subject, text: email.text)
    }

    private struct Delivery: ActionLinkDelivery {
        let emailer: ActionLinkEmailer
        let room: MailQueue.Reservation

        func send(_ link: ActionLink) { room.enqueue(emailer.message(for: link)) }
    }
}
