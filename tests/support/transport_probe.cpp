#include "tests/support/transport_probe.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "deepcomm/deepcomm.h"

namespace dctest {

std::string reason_from_child(const std::function<std::string()>& probe, const std::string& if_crashed) {
  int out[2];
  if (pipe(out) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    const std::string why = probe();
    if (!why.empty() && write(out[1], why.data(), why.size()) < 0) _exit(2);
    _exit(0);
  }
  close(out[1]);
  std::string why;
  char buf[512];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) why.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (why.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) why = if_crashed;
  return why;
}

std::string transport_unavailable(const char* transport) {
  if (std::strncmp(transport, "ucx", 3) != 0) return "";
  return reason_from_child(
      [transport]() -> std::string {
        setenv("DEEPCOMM_TRANSPORT", transport, 1);
        dcUniqueId id;
        dcComm_t comm = nullptr;
        if (dcGetUniqueId(&id) != dcSuccess || dcCommInitRank(&comm, 1, &id, 0, nullptr) != dcSuccess)
          return dcGetLastError();
        dcCommDestroy(comm);
        return "";
      },
      "a one-rank communicator over " + std::string(transport) + " failed");
}

std::string test_name(const char* transport) {
  std::string name = transport;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

}  // namespace dctest
