#include "base/random_bytes.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.h"

namespace dc {

void random_bytes(void* buf, size_t len) {
  auto* at = static_cast<char*>(buf);
  size_t got = 0;
  while (got < len) {
    const ssize_t n = getrandom(at + got, len - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(dcSystemError, std::string("DeepComm: getrandom failed: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
}

}  // namespace dc
