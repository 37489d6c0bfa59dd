// What a communicator leaves listening: one whose ranks all share a host opens no TCP listener
// (its TCP transport binds a port but listens only when a peer must dial in), unless TCP is asked
// for; the rendezvous root stops listening once every rank joined.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace {

// Socket inodes of this process's descriptors.
std::set<std::string> own_socket_inodes() {
  std::set<std::string> inodes;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(dir)) {
      char target[256] = {};
      const std::string path = std::string("/proc/self/fd/") + e->d_name;
      const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
      const std::string t(target, n > 0 ? static_cast<size_t>(n) : 0);
      if (t.rfind("socket:[", 0) == 0) inodes.insert(t.substr(8, t.size() - 9));
    }
    closedir(dir);
  }
  return inodes;
}

// TCP sockets of this process in the LISTEN state (IPv4 and IPv6).
int tcp_listeners() {
  const std::set<std::string> mine = own_socket_inodes();
  int listening = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state == "0A" && mine.count(inode)) ++listening;
    }
  }
  return listening;
}

int listeners_while_connected(const char* transport) {
  if (transport) setenv("DEEPCOMM_TRANSPORT", transport, 1);
  dcComm_t comms[3];
  EXPECT_EQ(dcCommInitAll(comms, 3), dcSuccess) << dcGetLastError();
  const int listening = tcp_listeners();
  for (dcComm_t c : comms) dcCommDestroy(c);
  unsetenv("DEEPCOMM_TRANSPORT");
  return listening;
}

TEST(Listeners, SingleHostCommunicatorListensOnNoTcpPort) { EXPECT_EQ(listeners_while_connected(nullptr), 0); }

TEST(Listeners, TcpAskedForListensForItsDialers) {
  // Ranks 1 and 2 accept their lower peers' connections: two listeners (the root's is closed).
  EXPECT_EQ(listeners_while_connected("tcp"), 2);
}

}  // namespace
