// Which DEEPCOMM_TRANSPORT settings can run here, for tests parameterized by transport.
#pragma once

#include <functional>
#include <string>

namespace dctest {

// Runs `probe` in a child process and returns what it returned ("" for success), or
// `if_crashed` when the child died without saying: probing there keeps this process free of
// what the probe starts (a UCX context, an engine) before the tests fork.
std::string reason_from_child(const std::function<std::string()>& probe, const std::string& if_crashed);

// Why communicators cannot use DEEPCOMM_TRANSPORT=transport here ("" when they can): UCX may be
// absent (built without libucx-dev, or libucp.so.0 missing). Found in a child process, so that
// this one starts no UCX of its own.
std::string transport_unavailable(const char* transport);
// The transport's name as part of a test name ("ucx-all" -> "ucx_all").
std::string test_name(const char* transport);

}  // namespace dctest
