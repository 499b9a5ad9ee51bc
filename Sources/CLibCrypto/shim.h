// OpenSSL 3's libcrypto (Debian: libssl-dev): RS256 signatures, which it computes about twice as
// fast as swift-crypto's BoringSSL on CPUs with AVX-512 IFMA, and its DRBG (HearthCrypto's
// SecureRandom), five times faster than the kernel's getrandom here. Everything else uses
// swift-crypto.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
