/// Which of Hearth's two ways of running is in force. Development is the Auth Emulator's: any
/// API key, `Bearer owner` as admin, unsigned custom tokens, the fake identity provider, links kept
/// in an outbox, loopback only. Production asks for registered API keys and admin credentials,
/// signed custom tokens, real identity providers and registered apps.
public enum Profile: String, Sendable, CaseIterable {
    case development, production
}
