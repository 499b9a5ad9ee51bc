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

    /// Text (or an attribute's value) as HTML that shows it and nothing more. Byte by byte, as
    /// the browser's parser reads code points: a quote followed by a combining mark is one
    /// Swift `Character`, but still a quote that would end an attribute.
    static func escaped(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else { return text }
        var out = HTMLBuffer(capacity: utf8.count + utf8.count / 8)
        out.escaping(text)
        return out.text
    }
}
