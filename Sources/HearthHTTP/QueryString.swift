import HearthAuth
import HearthWire
import Hummingbird

/// A request's query parameters, parsed once per request (every client call carries `?key=`).
struct QueryString: Sendable {
    private(set) var values: [String: String] = [:]

    init(_ request: Request) {
        guard let query = request.uri.query else { return }
        for field in FormEncoding.fields(query) { values[field.name] = field.value }
    }

    subscript(name: String) -> String? { values[name] }
}

extension Request {
    /// This server as the request reached it, for links back to it (`/emulator/*` pages).
    var baseURL: String {
        "http://" + (head.authority ?? "127.0.0.1:9099")
    }
}
