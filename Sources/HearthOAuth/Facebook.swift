import HearthAuth
import HearthDomain
import HearthWire

/// Facebook Login's access tokens (Firebase lets an account, an anonymous one included, link
/// Facebook and then sign in with it): the Graph API's `debug_token`, asked with the app's own
/// token (`<app id>|<app secret>`), must say the token is valid and issued to the configured
/// app; then `/me` gives the profile.
struct Facebook: Sendable {
    let http: ProviderHTTP
    let graph: String

    func verify(accessToken token: String, appId: String, appSecret: String) async throws -> FederatedIdentity {
        let debug = try await http.get(
            url(graph + "/debug_token", [("input_token", token), ("access_token", "\(appId)|\(appSecret)")]))
        guard debug.status == 200, let data = debug.json?["data"], data["is_valid"] == .bool(true),
            data["app_id"]?.stringValue == appId
        else { throw IdentityProviderFailure.refused("Facebook did not confirm the access token was issued to this app") }
        let me = try await http.get(url(graph + "/me", [("fields", "id,name,email,picture"), ("access_token", token)]))
        guard me.status == 200, let profile = me.json?.objectValue, let id = profile["id"]?.stringValue, !id.isEmpty else {
            throw IdentityProviderFailure.refused("Facebook did not give the token's profile")
        }
        let email = profile["email"]?.stringValue?.lowercased()
        return FederatedIdentity(
            providerId: .facebook, subject: id, email: email,
            // Facebook returns only confirmed addresses, but it is not their authority.
            emailVerified: email != nil, displayName: profile["name"]?.stringValue,
            photoUrl: profile["picture"]?["data"]?["url"]?.stringValue, screenName: nil, rawUserInfo: .object(profile),
            idToken: nil, accessToken: token)
    }
}
