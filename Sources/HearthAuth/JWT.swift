import HearthWire

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
        let input = signingInput(payload, key)
        return assemble(input, signature: try key.sign(Array(input.utf8)))
    }

    /// `header.payload`, base64url: what the signature covers.
    static func signingInput(_ payload: JSONValue, _ key: SigningKey) -> String {
        key.encodedJWTHeader + "." + Base64URL.encode(payload.encoded())
    }

    static func assemble(_ signingInput: String, signature: [UInt8]) -> String {
        signingInput + "." + Base64URL.encode(signature)
    }

    /// The base64url header every token this key signs carries.
    static func encodedHeader(algorithm: SigningKey.Algorithm, keyID: String) -> String {
        let header: JSONValue = ["alg": .string(algorithm.rawValue), "kid": .string(keyID), "typ": "JWT"]
        return Base64URL.encode(header.encoded())
    }

    /// Splits and decodes a token without checking its signature; `nil` when it is not a JWT
    /// (three segments, base64url JSON objects for header and payload).
    public static func decode(_ token: String) -> Parts? {
        let bytes = Array(token.utf8)
        guard let first = bytes.firstIndex(of: UInt8(ascii: ".")),
            let second = bytes[(first + 1)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[(second + 1)...].contains(UInt8(ascii: "."))
        else { return nil }
        guard let headerBytes = Base64URL.decode(bytes[..<first]), let header = JSONValue.parse(headerBytes)?.objectValue,
            let payloadBytes = Base64URL.decode(bytes[(first + 1)..<second]),
            let payload = JSONValue.parse(payloadBytes)?.objectValue,
            let signature = Base64URL.decode(bytes[(second + 1)...])
        else { return nil }
        return Parts(header: header, payload: payload, signingInput: Array(bytes[..<second]), signature: signature)
    }
}
