/// An account's own changes and deletion, and administration: create, import, read, list, delete in bulk.
public struct AccountService: AuthFlow {
    public let context: AuthContext

    public init(context: AuthContext) {
        self.context = context
    }
}
