import HTTPTypes
import HearthAPIJSON
import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// The project page, and its settings form saved through the v2 config path: the fields that
/// changed become the update mask, so the `project.config_changed` event names just those.
extension ConsoleAPI {
    func project(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Response {
        guard let visitor = try visitor(request, context) else { return Self.toSignIn }
        let done = QueryString(request)["done"].flatMap(ConsoleOutcome.Change.init(rawValue:))
        return try projectPage(visitor, outcome: done.map { .done($0) })
    }

    func projectPage(_ visitor: Visitor, outcome: ConsoleOutcome?, status: HTTPResponse.Status = .ok) throws -> Response {
        let caller = visitor.caller
        let page = ConsoleProjectPage(
            project: caller.project, config: try projects.config(caller), history: try projects.settingsHistory(caller),
            csrf: visitor.session.csrf, outcome: outcome)
        return self.page(visitor, status: status, title: "Project", body: page.render())
    }

    /// `POST /console/project`: the settings form.
    func changeProject(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        guard let (visitor, form) = try await change(request, context) else { return ConsolePage.refused() }
        let caller = visitor.caller
        do {
            let current = ProjectConfigJSON.render(try projects.config(caller), project: caller.project)
            let (body, mask) = try Self.settingsUpdate(form, current: current)
            guard !mask.isEmpty else { return Self.redirectToProject(.unchanged) }
            _ = try await projects.updateConfig(caller) { config in
                try ProjectConfigJSON.apply(body, updateMask: mask.joined(separator: ","), to: config)
            }
            return Self.redirectToProject(.saved)
        } catch {
            guard let refusal = Self.refusal(error) else { throw error }
            return try projectPage(visitor, outcome: .refused(refusal.message), status: .badRequest)
        }
    }

    /// The v2 body and update mask of the form's fields that differ from `current`.
    static func settingsUpdate(_ form: [String: String], current: JSONValue) throws -> (JSONValue, [String]) {
        var leaves: [(String, JSONValue)] = []
        for (path, _) in ConsoleProjectPage.flags { leaves.append((path, .bool(form[path] == "on"))) }
        for (path, _) in ConsoleProjectPage.lists {
            let lines = (form[path] ?? "").split(whereSeparator: \.isNewline).map { trimmed(String($0)) }.filter { !$0.isEmpty }
            leaves.append((path, .array(lines.map(JSONValue.string))))
        }
        for (path, label) in ConsoleProjectPage.jsonLists {
            let text = trimmed(form[path] ?? "")
            guard let list = JSONValue.parse(Array((text.isEmpty ? "[]" : text).utf8)), list.arrayValue != nil else {
                throw FirebaseError.bad("INVALID_CONFIG : ((\(label.prefix { $0 != "(" }) must be a JSON list.))")
            }
            leaves.append((path, list))
        }
        var body: [String: JSONValue] = [:]
        var mask: [String] = []
        for (path, value) in leaves where ConsoleProjectPage.value(current, path) != value {
            mask.append(path)
            ProjectConfigJSON.insert(value, at: path.split(separator: ".")[...], into: &body)
        }
        return (.object(body), mask)
    }

    static func redirectToProject(_ done: ConsoleOutcome.Change) -> Response {
        redirect(to: "/console/project", done)
    }
}
