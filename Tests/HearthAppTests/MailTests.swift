import Foundation
import HearthApp
import HearthAuth
import HearthDomain
import HearthMail
import HearthTesting
import Testing

@Suite("action emails: Firebase's texts, rendered as RFC 5322 with nothing injectable")
struct MailTests {
    static func link(_ type: OOBCodeIssued.RequestType, newEmail: String? = nil) -> ActionLink {
        ActionLink(
            project: ProjectID("demo-hearth")!, email: "old@example.com", newEmail: newEmail, requestType: type,
            oobCode: "CODE", oobLink: "https://app.example.com/action?mode=x&oobCode=CODE")
    }

    @Test("each kind of link has its subject, names the app and carries the link; a change of email goes to the new address")
    func texts() {
        let reset = ActionEmail(Self.link(.passwordReset), appName: "Acme")
        #expect(reset.to == "old@example.com")
        #expect(reset.subject == "Reset your password for Acme")
        #expect(reset.text.contains("reset your Acme password for your old@example.com account"))
        #expect(reset.text.contains("\nhttps://app.example.com/action?mode=x&oobCode=CODE\n"))
        #expect(ActionEmail(Self.link(.verifyEmail), appName: "Acme").subject == "Verify your email for Acme")
        #expect(ActionEmail(Self.link(.emailSignIn), appName: "Acme").subject == "Sign in to Acme")
        let change = ActionEmail(Self.link(.verifyAndChangeEmail, newEmail: "new@example.com"), appName: "Acme")
        #expect(change.to == "new@example.com")
        #expect(change.text.contains("verify new@example.com as the new email address"))
    }

    @Test("mail settings: the relay's port follows its security; a sender and a real action URL are required")
    func mailSettings() throws {
        let directory = TemporaryDirectory("mail-config")
        let passwordFile = directory.path + "/smtp-password"
        try "relay-pass\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let loaded = try ServerConfiguration.load(
            file: nil,
            environment: [
                "HEARTH_SMTP_HOST": "mail.example.com", "HEARTH_MAIL_FROM": "auth@example.com",
                "HEARTH_SMTP_USERNAME": "hearth", "HEARTH_SMTP_PASSWORD_FILE": passwordFile,
                "HEARTH_ACTION_URL": "https://app.example.com/__/auth/action",
            ])
        let smtp = try #require(loaded.mail.smtp)
        #expect(smtp.host == "mail.example.com" && smtp.port == 587 && smtp.security == .startTLS)
        #expect(smtp.username == "hearth" && smtp.password == "relay-pass")
        let implicit = try ServerConfiguration.load(
            file: nil, environment: ["HEARTH_SMTP_HOST": "mail", "HEARTH_MAIL_FROM": "a@example.com", "HEARTH_SMTP_SECURITY": "TLS"])
        #expect(implicit.mail.smtp?.port == 465)
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).mail.smtp == nil)
        for environment in [
            ["HEARTH_SMTP_HOST": "mail"],  // no sender
            ["HEARTH_SMTP_HOST": "mail", "HEARTH_MAIL_FROM": "not an address"],
            ["HEARTH_SMTP_HOST": "mail", "HEARTH_MAIL_FROM": "a@example.com", "HEARTH_SMTP_SECURITY": "ssl"],
            ["HEARTH_SMTP_HOST": "mail", "HEARTH_MAIL_FROM": "a@example.com", "HEARTH_SMTP_PORT": "0"],
            ["HEARTH_SMTP_HOST": "mail", "HEARTH_MAIL_FROM": "a@example.com", "HEARTH_SMTP_TRUST_ROOTS": "/nonexistent.pem"],
            [
                "HEARTH_SMTP_HOST": "mail", "HEARTH_MAIL_FROM": "a@example.com", "HEARTH_PROFILE": "production",
                "HEARTH_API_KEYS": #"{"k": "p"}"#,
            ],  // production mail without actionUrl
            ["HEARTH_ACTION_URL": "/relative/action"],
            ["HEARTH_ACTION_URL": "ftp://example.com/action"],
        ] {
            #expect(throws: ConfigurationError.self) { try ServerConfiguration.load(file: nil, environment: environment) }
        }
    }

    @Test("a trust-roots file that holds no certificate stops the daemon at start, naming the setting")
    func unreadableTrustRoots() throws {
        let directory = TemporaryDirectory("mail-roots")
        let roots = directory.path + "/roots.pem"
        try "not a certificate\n".write(toFile: roots, atomically: true, encoding: .utf8)
        var configuration = ServerSettings()
        configuration.dataDirectory = directory.path + "/data"
        configuration.mail.smtpHost = "localhost"
        configuration.mail.from = "auth@example.com"
        configuration.mail.smtpTrustRoots = roots
        let valid = try configuration.validated()
        #expect {
            _ = try HearthServer.assemble(valid)
        } throws: { error in
            guard case ConfigurationError.invalid(let key, _) = error else { return false }
            return key == "smtpTrustRoots"
        }
    }
}
