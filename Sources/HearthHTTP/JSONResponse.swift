import HearthAuth
import HearthWire
import Hummingbird
import NIOCore

/// JSON answers and the Firebase error envelope every SDK parses.
enum JSONResponse {
    static func ok(_ body: JSONValue) -> Response {
        make(.ok, body)
    }

    static func make(_ status: HTTPResponse.Status, _ body: JSONValue) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.encoded())))
    }

    static func error(_ error: FirebaseError) -> Response {
        make(HTTPResponse.Status(code: error.httpStatus), envelope(error))
    }

    /// `{"error":{"code":400,"message":"EMAIL_EXISTS","errors":[{"message":..,"reason":..,"domain":"global"}]}}`
    static func envelope(_ error: FirebaseError) -> JSONValue {
        var envelope: [String: JSONValue] = [
            "code": .int(Int64(error.httpStatus)),
            "message": .string(error.message),
            "errors": [["message": .string(error.message), "reason": .string(error.reason), "domain": "global"]],
        ]
        if let status = error.status { envelope["status"] = .string(status) }
        return ["error": .object(envelope)]
    }
}
