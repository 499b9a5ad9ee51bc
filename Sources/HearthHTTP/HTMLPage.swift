import Hummingbird
import NIOCore

/// The few HTML pages Hearth serves (the fake IdP, the OAuth handler's errors): never cached.
enum HTMLPage {
    static func response(_ status: HTTPResponse.Status, title: String, body: String) -> Response {
        let html =
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>\(title)</title>"
            + "<meta name=\"viewport\" content=\"width=device-width\"></head><body>\(body)</body></html>"
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// Text (or an attribute's value) as HTML that shows it and nothing more.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
