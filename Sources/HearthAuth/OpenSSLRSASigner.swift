import CLibCrypto
import Synchronization

/// RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signatures through the system's OpenSSL 3, which
/// signs RSA-2048 about twice as fast as swift-crypto's BoringSSL on CPUs with AVX-512 IFMA
/// (`hearth bench signing` measures both). Signing contexts are set up once and reused, one
/// per concurrent signer: setting one up costs OpenSSL 3 an algorithm fetch under a lock.
final class OpenSSLRSASigner: @unchecked Sendable {
    private let key: OpaquePointer
    private let size: Int
    /// An `EVP_PKEY_CTX` initialized for signing with `key`, used by one signer at a time.
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    // Idle contexts, taken and given back under the lock.
    private let idle = Mutex<[Context]>([])

    /// The private key of a PEM (PKCS#1 or PKCS#8); `nil` when OpenSSL can not read it.
    init?(pem: String) {
        let loaded: OpaquePointer? = pem.utf8CString.withUnsafeBufferPointer { text in
            guard let bio = BIO_new_mem_buf(text.baseAddress, Int32(text.count - 1)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let loaded, EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            if let loaded { EVP_PKEY_free(loaded) }
            return nil
        }
        key = loaded
        size = Int(EVP_PKEY_get_size(loaded))
    }

    deinit {
        for context in idle.withLock({ $0 }) { EVP_PKEY_CTX_free(context.pointer) }
        EVP_PKEY_free(key)
    }

    /// The signature of a SHA-256 `digest`.
    func sign(digest: [UInt8]) throws -> [UInt8] {
        let context = try take()
        defer { idle.withLock { $0.append(context) } }
        var signature = [UInt8](repeating: 0, count: size)
        var length = size
        guard EVP_PKEY_sign(context.pointer, &signature, &length, digest, digest.count) == 1 else { throw OpenSSLError.signing }
        return Array(signature.prefix(length))
    }

    private func take() throws -> Context {
        if let context = idle.withLock({ $0.popLast() }) { return context }
        guard let context = EVP_PKEY_CTX_new(key, nil) else { throw OpenSSLError.signing }
        guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) > 0,
            EVP_PKEY_CTX_set_signature_md(context, EVP_sha256()) > 0
        else {
            EVP_PKEY_CTX_free(context)
            throw OpenSSLError.signing
        }
        return Context(pointer: context)
    }
}

enum OpenSSLError: Error {
    case signing
}
