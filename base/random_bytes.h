// Unpredictable bytes from the kernel (getrandom), for secrets, nonces and names.
#pragma once

#include <cstddef>

namespace dc {

// Fills buf; throws dc::Error(dcSystemError) if the kernel cannot supply them.
void random_bytes(void* buf, size_t len);

}  // namespace dc
