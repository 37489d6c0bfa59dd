#include "src/core/bootstrap/env_secret.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "base/error.h"
#include "base/log.h"
#include "base/sha256.h"
#include "src/core/settings.h"

namespace dc {

namespace {

constexpr size_t kMinSecretChars = 16;

std::string read_secret_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(dcInvalidUsage, "DEEPCOMM_SECRET names " + path + ", which cannot be read");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && std::strchr(" \t\r\n", text.back())) text.pop_back();
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
    DC_WARN("DEEPCOMM_SECRET: %s can be read by other users than its owner", path.c_str());
  return text;
}

}  // namespace

Secret secret_from_text(const std::string& text) {
  if (text.size() < kMinSecretChars)
    fail(dcInvalidUsage, "DEEPCOMM_SECRET must be at least " + std::to_string(kMinSecretChars) +
                             " characters (for example the output of `openssl rand -hex 16`)");
  static constexpr char kDomain[] = "DeepComm secret 1";
  Sha256 h;
  h.update(kDomain, sizeof kDomain);
  h.update(text.data(), text.size());
  const Digest digest = h.finish();
  Secret secret;
  std::memcpy(secret.bytes.data(), digest.data(), secret.bytes.size());
  return secret;
}

IdCredentials credentials_from_environment(const std::string& session_text, const char* what) {
  IdCredentials c;
  c.session = session_from_text(session_text);
  if (auto value = config::text(settings::kSecret)) {
    c.secret = secret_from_text((*value)[0] == '/' ? read_secret_file(*value) : *value);
    c.authenticated = true;
    return c;
  }
  static std::once_flag logged;
  std::call_once(logged, [what] {
    DC_INFO(
        "%s without DEEPCOMM_SECRET: the communicator is unauthenticated (anyone who can reach "
        "the rendezvous address can join); set DEEPCOMM_SECRET to the same text on every rank",
        what);
  });
  return c;
}

}  // namespace dc
