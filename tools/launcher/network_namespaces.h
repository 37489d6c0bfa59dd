// The network namespaces deepcomm-run places ranks in (--netns): opened up front, so that a wrong
// name or missing rights is reported before any rank starts.
#pragma once

#include <string>
#include <vector>

namespace dc::launcher {

class NetworkNamespaces {
 public:
  // Opens each namespace: a name made by `ip netns add` (/run/netns/NAME) or a path such as
  // /proc/PID/ns/net. Throws std::runtime_error with a message naming the namespace when one does
  // not exist or is not a network namespace.
  explicit NetworkNamespaces(const std::vector<std::string>& names);
  ~NetworkNamespaces();
  NetworkNamespaces(const NetworkNamespaces&) = delete;
  NetworkNamespaces& operator=(const NetworkNamespaces&) = delete;

  // Moves the calling thread into namespace i. Throws std::runtime_error (needs root) on failure.
  void enter(int i) const;
  // The namespace's file descriptor, for setns in a forked child; -1 when none was given.
  int fd(int i) const;
  bool empty() const { return fds_.empty(); }

 private:
  std::vector<std::string> names_;
  std::vector<int> fds_;
};

}  // namespace dc::launcher
