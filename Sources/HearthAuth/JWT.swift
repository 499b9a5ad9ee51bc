/// Compact JWS (RFC 7515) encoding of JSON tokens: `header.payload.signature`, base64url.
public enum JWT {
    public struct Parts: Sendable {
        public var header: [String: JSONValue]
        public var payload: [String: JSONValue]
        /// `header.payload` as sent: the bytes the signature covers.
        public var signingInput: [UInt8]
        public var signature: [UInt8]
    }

    public static func sign(payload: JSONValue, with key: SigningKey) throws -> String {
        let header: JSONValue = ["alg": .string(key.algorithm.rawValue), "kid": .string(key.keyID), "typ": "JWT"]
        let signingInput = Base64URL.encode(header.encoded()) + "." + Base64URL.encode(payload.encoded())
        return signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
    }

    /// Splits and decodes a token without checking its signature; `nil` when it is not a JWT
    /// (three segments, base64url JSON objects for header and payload).
    public static func decode(_ token: String) -> Parts? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let headerBytes = Base64URL.decode(segments[0]), let header = JSONValue.parse(headerBytes)?.objectValue,
            let payloadBytes = Base64URL.decode(segments[1]), let payload = JSONValue.parse(payloadBytes)?.objectValue,
            let signature = Base64URL.decode(segments[2])
        else { return nil }
        let signingInput = Array(token.utf8.prefix(segments[0].utf8.count + 1 + segments[1].utf8.count))
        return Parts(header: header, payload: payload, signingInput: signingInput, signature: signature)
    }
}
