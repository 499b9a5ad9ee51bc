/// The form that adds a user, as the Admin SDK's `createUser`: an email and password, a phone
/// number, or neither; a uid of one's own or a generated one.
struct ConsoleNewUserPage {
    var csrf: String
    /// Why the last attempt was refused.
    var refusal: String?
    /// The last attempt's fields (never its password), to correct rather than retype.
    var values: [String: String] = [:]

    func render() -> String {
        var html = "<h1>Add user</h1>"
        if let refusal { html += ConsoleOutcome.refused(refusal).html }
        html += "<form method=\"post\" action=\"/console/add-user\" class=\"stack\">"
        html += "<input type=\"hidden\" name=\"csrf\" value=\"\(HTMLPage.escaped(csrf))\">"
        html += field("Email", "email", type: "email")
        html += "<label>Password<input type=\"password\" name=\"password\" autocomplete=\"new-password\"></label>"
        html += field("Display name", "displayName", type: "text")
        html += field("Phone number (E.164, +…)", "phoneNumber", type: "tel")
        html += field("User UID (blank: generated)", "uid", type: "text")
        let verified = values["emailVerified"] == "on" ? " checked" : ""
        html += "<label class=\"check\"><input type=\"checkbox\" name=\"emailVerified\" value=\"on\"\(verified)> Email verified</label>"
        return html + "<button type=\"submit\">Add user</button></form>"
    }

    private func field(_ label: String, _ name: String, type: String) -> String {
        "<label>\(HTMLPage.escaped(label))<input type=\"\(type)\" name=\"\(name)\" value=\"\(HTMLPage.escaped(values[name] ?? ""))\" autocomplete=\"off\"></label>"
    }
}
