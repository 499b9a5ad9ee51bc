// GNU Nettle (Debian: nettle-dev): AES-256-GCM with the key schedule and GHASH key kept in one
// context, and per message only the IV, the blocks and the tag: no provider or parameter
// plumbing per call, as OpenSSL 3's EVP has (HearthCrypto.AES256GCMKey measures both).
#include <nettle/gcm.h>
