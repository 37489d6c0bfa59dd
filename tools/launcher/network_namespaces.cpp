#include "tools/launcher/network_namespaces.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace dc::launcher {

namespace {

std::string path_of(const std::string& name) {
  return name.find('/') == std::string::npos ? "/run/netns/" + name : name;
}

int open_namespace(const std::string& name) {
  std::string path = path_of(name);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT)
      throw std::runtime_error("no network namespace " + name + " (" + path +
                               " does not exist; `ip netns list` shows the named ones)");
    throw std::runtime_error("cannot open network namespace " + name + " (" + path + "): " + std::strerror(error));
  }
  if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET) {
    close(fd);
    throw std::runtime_error(path + " is not a network namespace");
  }
  return fd;
}

}  // namespace

NetworkNamespaces::NetworkNamespaces(const std::vector<std::string>& names) : names_(names) {
  try {
    for (const auto& name : names) fds_.push_back(open_namespace(name));
  } catch (...) {
    for (int fd : fds_) close(fd);
    throw;
  }
}

NetworkNamespaces::~NetworkNamespaces() {
  for (int fd : fds_) close(fd);
}

void NetworkNamespaces::enter(int i) const {
  if (setns(fds_.at(i), CLONE_NEWNET) != 0) {
    int error = errno;
    std::string message = "cannot enter network namespace " + names_.at(i) + ": " + std::strerror(error);
    if (error == EPERM) message += " (placing ranks in namespaces needs root or CAP_SYS_ADMIN)";
    throw std::runtime_error(message);
  }
}

int NetworkNamespaces::fd(int i) const { return fds_.empty() ? -1 : fds_.at(i); }

}  // namespace dc::launcher
