#include "tests/faults/fault_support.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace dctest {

std::set<std::string> deepcomm_shm_names() {
  std::set<std::string> names;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).find("deepcomm") != std::string::npos) names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

std::string transport_unavailable(const char* transport) {
  if (std::strncmp(transport, "ucx", 3) != 0) return "";
  int out[2];
  if (pipe(out) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(out[0]);
    setenv("DEEPCOMM_TRANSPORT", transport, 1);
    dcUniqueId id;
    dcComm_t comm = nullptr;
    if (dcGetUniqueId(&id) != dcSuccess || dcCommInitRank(&comm, 1, &id, 0, nullptr) != dcSuccess) {
      const char* why = dcGetLastError();
      if (write(out[1], why, std::strlen(why)) < 0) _exit(2);
      _exit(1);
    }
    dcCommDestroy(comm);
    _exit(0);
  }
  close(out[1]);
  std::string why;
  char buf[512];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) why.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (why.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) why = "a one-rank communicator over " + std::string(transport) + " failed";
  return why;
}

std::string test_name(const char* transport) {
  std::string name = transport;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

dcResult_t run_one(dcComm_t comm, dcCollective_t kind, int rank, int n) {
  const size_t count = 1 << 16;
  std::vector<float> in(count * n, 1.0f), out(count * n, 0.0f);
  switch (kind) {
    case dcCollAllReduce: return dcAllReduce(in.data(), out.data(), count, dcFloat32, dcSum, comm, nullptr);
    case dcCollBroadcast: return dcBroadcast(in.data(), out.data(), count, dcFloat32, 0, comm, nullptr);
    case dcCollAllGather: return dcAllGather(in.data(), out.data(), count, dcFloat32, comm, nullptr);
    case dcCollReduceScatter: return dcReduceScatter(in.data(), out.data(), count, dcFloat32, dcSum, comm, nullptr);
    case dcCollAlltoAll: return dcAlltoAll(in.data(), out.data(), count, dcFloat32, comm, nullptr);
    default: {
      dcGroupStart();
      dcSend(in.data(), count, dcFloat32, (rank + 1) % n, comm, nullptr);
      dcRecv(out.data(), count, dcFloat32, (rank + n - 1) % n, comm, nullptr);
      return dcGroupEnd();
    }
  }
}

}  // namespace dctest
