// libxcrypt (Debian: libcrypt-dev): bcrypt verification of imported password hashes.
#include <crypt.h>
