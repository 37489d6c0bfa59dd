// Runs a shell command and reads a library's exported symbols with `nm -D`, for the tests that
// compare export lists (nccl_abi_test, nccl_reference230_test).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <string>

struct CommandResult {
  int status = -1;
  std::string output;
};

inline CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Defined dynamic symbols of the library: name -> address. *ok is false when nm failed (the
// output is then in *error).
inline std::map<std::string, std::string> exported_symbols(const std::string& library, bool* ok, std::string* error) {
  std::map<std::string, std::string> address_of;
  const CommandResult nm = run("nm -D --defined-only '" + library + "'");
  *ok = nm.status == 0;
  if (!*ok) *error = nm.output;
  size_t pos = 0;
  while (pos < nm.output.size()) {
    const size_t end = nm.output.find('\n', pos);
    const std::string line = nm.output.substr(pos, end - pos);
    pos = end == std::string::npos ? nm.output.size() : end + 1;
    char address[64], type[8], name[256];
    if (std::sscanf(line.c_str(), "%63s %7s %255s", address, type, name) == 3) {
      address_of[name] = address;
    }
  }
  return address_of;
}
