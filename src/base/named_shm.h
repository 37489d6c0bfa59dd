// Named POSIX shared-memory objects mapped read-write, for segments that ranks of one host set up
// together: one creates the name, the others open it, and the name is removed once all have it.
#pragma once

#include <cstddef>
#include <string>

namespace dc {

// Creates `name` (exclusively, mode 0600) with `bytes` of zeros and maps it. On any failure the
// name is removed again and dc::Error(dcSystemError) names `what`, the object and the cause.
void* create_named_shm(const std::string& name, size_t bytes, const std::string& what);
// Opens and maps `name`, which must be exactly `bytes` long (throws dc::Error(dcSystemError)).
void* open_named_shm(const std::string& name, size_t bytes, const std::string& what);

}  // namespace dc
