import HTTPTypes
import Hummingbird

extension Request {
    /// Whether a browser sent this from a page of the host it was sent to: its `Origin` is that
    /// host (`Host`, or HTTP/2's authority). Not a cross-origin call then, and a form the
    /// console's own page posted.
    var isSameOrigin: Bool {
        guard let origin = headers[.origin], let host = headers[AppLinksAPI.hostField] ?? head.authority else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }
}
