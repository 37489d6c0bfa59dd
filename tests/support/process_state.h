// What a test measures about a process or the machine to show nothing leaked: entries in /dev/shm,
// resident memory, open descriptors.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <set>
#include <string>

namespace dctest {

// Names in /dev/shm that contain `part` (every name for ""), without "." and "..".
inline std::set<std::string> dev_shm_names(const std::string& part = "") {
  std::set<std::string> names;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != ".." && name.find(part) != std::string::npos) names.insert(name);
    }
    closedir(dir);
  }
  return names;
}

// This process's resident memory in bytes.
inline size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// This process's resident shared memory in bytes (RssShmem: memfd and /dev/shm pages it maps).
inline size_t shared_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "RssShmem:") {
      size_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(4096, '\n');
  }
  return 0;
}

// This process's open descriptors (not counting the one that lists them).
inline int open_fds() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
    closedir(dir);
  }
  return n - 1;
}

}  // namespace dctest
