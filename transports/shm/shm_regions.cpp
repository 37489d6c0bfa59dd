#include "transports/shm/shm_regions.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "src/base/error.h"
#include "src/base/log.h"
#include "src/base/shareable_memory.h"

namespace dc {

namespace {

// What travels with the fd.
struct RegionNotice {
  static constexpr uint64_t kMagic = 0x44434F4D4D524547ull;  // "DCOMMREG"
  uint64_t magic = kMagic;
  uint64_t session = 0;
  int32_t rank = 0;
  int32_t pad = 0;
  uint64_t id = 0;
  uint64_t base = 0;
  uint64_t size = 0;
};

socklen_t abstract_address(const std::string& transport_address, sockaddr_un* sa) {
  const std::string name = transport_address + ".fd";
  std::memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  const size_t len = std::min(name.size(), sizeof sa->sun_path - 1);
  std::memcpy(sa->sun_path + 1, name.data(), len);  // sun_path[0] = 0: abstract namespace
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
}

}  // namespace

ShmRegions::ShmRegions(const std::string& address, uint64_t session, int rank)
    : session_(session), rank_(rank) {
  socket_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (socket_ < 0) fail(dcSystemError, std::string("shm transport: datagram socket: ") + std::strerror(errno));
  sockaddr_un sa;
  const socklen_t len = abstract_address(address, &sa);
  if (::bind(socket_, reinterpret_cast<sockaddr*>(&sa), len) != 0) {
    const int err = errno;
    ::close(socket_);
    fail(dcSystemError, std::string("shm transport: cannot bind the region socket: ") + std::strerror(err));
  }
}

ShmRegions::~ShmRegions() {
  for (auto& [key, region] : imports_) munmap(const_cast<char*>(region.local), region.size);
  for (auto& [id, region] : exports_) ::close(region.fd);
  ::close(socket_);
}

uint64_t ShmRegions::export_region(const void* addr, size_t size) {
  ShareableRegion shareable;
  if (!find_shareable(addr, size, &shareable)) return 0;
  const int fd = fcntl(shareable.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return 0;
  const uint64_t id = next_id_++;
  exports_[id] = ExportedRegion{id, static_cast<const char*>(shareable.base), shareable.size, fd};
  return id;
}

void ShmRegions::unexport_region(uint64_t id) {
  auto it = exports_.find(id);
  if (it == exports_.end()) return;
  ::close(it->second.fd);
  exports_.erase(it);
}

const ExportedRegion* ShmRegions::find_export(const void* buf, size_t len) const {
  const char* p = static_cast<const char*>(buf);
  for (const auto& [id, region] : exports_) {
    if (p >= region.base && p + len <= region.base + region.size) return &region;
  }
  return nullptr;
}

bool ShmRegions::send_region(const ExportedRegion& region, const std::string& peer_address) {
  RegionNotice notice;
  notice.session = session_;
  notice.rank = rank_;
  notice.id = region.id;
  notice.base = reinterpret_cast<uintptr_t>(region.base);
  notice.size = region.size;
  iovec iov{&notice, sizeof notice};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  sockaddr_un sa;
  msghdr msg{};
  msg.msg_name = &sa;
  msg.msg_namelen = abstract_address(peer_address, &sa);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &region.fd, sizeof(int));
  if (::sendmsg(socket_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof notice)) return true;
  DC_INFO("shm transport: cannot pass registered region %llu to %s: %s",
          static_cast<unsigned long long>(region.id), peer_address.c_str(), std::strerror(errno));
  return false;
}

void ShmRegions::drain_socket() {
  for (;;) {
    RegionNotice notice;
    iovec iov{&notice, sizeof notice};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) return;  // EAGAIN: nothing more queued
    int fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
    if (fd < 0) continue;
    const bool valid = n == static_cast<ssize_t>(sizeof notice) && notice.magic == RegionNotice::kMagic &&
                       notice.session == session_ && notice.size > 0;
    void* local = valid ? mmap(nullptr, notice.size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    ::close(fd);  // the mapping keeps the memory alive
    if (local == MAP_FAILED) {
      DC_WARN("shm transport: ignored a region notice (%s)", valid ? std::strerror(errno) : "malformed or foreign");
      continue;
    }
    auto key = std::make_pair(static_cast<int>(notice.rank), notice.id);
    drop_import(key.first, key.second);
    imports_[key] = ImportedRegion{notice.base, notice.size, static_cast<const char*>(local)};
  }
}

const ImportedRegion* ShmRegions::find_import(int rank, uint64_t id) {
  auto key = std::make_pair(rank, id);
  auto it = imports_.find(key);
  if (it == imports_.end()) {
    drain_socket();
    it = imports_.find(key);
  }
  return it == imports_.end() ? nullptr : &it->second;
}

void ShmRegions::drop_import(int rank, uint64_t id) {
  auto it = imports_.find({rank, id});
  if (it == imports_.end()) return;
  munmap(const_cast<char*>(it->second.local), it->second.size);
  imports_.erase(it);
}

void ShmRegions::drop_imports_of(int rank) {
  for (auto it = imports_.begin(); it != imports_.end();) {
    if (it->first.first != rank) {
      ++it;
      continue;
    }
    munmap(const_cast<char*>(it->second.local), it->second.size);
    it = imports_.erase(it);
  }
}

}  // namespace dc
