// Helpers shared by the topology tests: fixture paths, finding devices by name, scoped env vars.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "topology/detect.h"
#include "topology/node.h"

namespace dc::topo::test {

inline std::string fixture(const std::string& relative) { return std::string(DC_TOPO_FIXTURES) + "/" + relative; }
inline std::string hwloc_xml(const std::string& name) { return fixture("hwloc/" + name); }

inline const Nic* find_nic(const NodeTopology& node, const std::string& name) {
  for (const Nic& nic : node.nics) {
    if (nic.name == name) return &nic;
  }
  return nullptr;
}

inline int gpu_index(const NodeTopology& node, const std::string& busid) {
  for (size_t g = 0; g < node.gpus.size(); ++g) {
    if (node.gpus[g].pci_busid == busid) return static_cast<int>(g);
  }
  return -1;
}

inline int nic_index(const NodeTopology& node, const std::string& name) {
  for (size_t n = 0; n < node.nics.size(); ++n) {
    if (node.nics[n].name == name) return static_cast<int>(n);
  }
  return -1;
}

// Sets (or, with nullopt, unsets) an environment variable for the scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

#define DC_REQUIRE_HWLOC() \
  if (!::dc::topo::hwloc_available()) GTEST_SKIP() << "built without hwloc: XML exports cannot be read"

}  // namespace dc::topo::test
