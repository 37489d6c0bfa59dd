// NCCL 2.30's parameter API over DeepComm's configuration table: every setting by key, typed
// getters that check their type's range, the key list, the dump, and refusals for unknown keys,
// foreign handles and small buffers. Secrets are never shown.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "deepcomm/nccl.h"

namespace {

// Sets a variable for one test and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) unsetenv(name_);
    else setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

ncclParamHandle_t bind(const char* key) {
  ncclParamHandle_t handle = nullptr;
  EXPECT_EQ(ncclParamBind(&handle, key), ncclSuccess) << ncclGetLastError(nullptr);
  return handle;
}

// What ncclParamDumpAll writes to stderr.
std::string dump_all() {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  const int saved = dup(STDERR_FILENO);
  fflush(stderr);
  dup2(pipe_fds[1], STDERR_FILENO);
  close(pipe_fds[1]);
  ncclParamDumpAll();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  close(pipe_fds[0]);
  return text;
}

TEST(ParamApi, KeysListEverySettingOnce) {
  const char** table = nullptr;
  int length = 0;
  ASSERT_EQ(ncclParamGetAllParameterKeys(&table, &length), ncclSuccess);
  std::set<std::string> keys(table, table + length);
  EXPECT_EQ(keys.size(), static_cast<size_t>(length)) << "a key listed twice";
  for (const char* expected : {"NCCL_DEBUG", "NCCL_COMM_BLOCKING", "NCCL_SOCKET_IFNAME", "DEEPCOMM_BOOTSTRAP_TIMEOUT",
                               "DEEPCOMM_TRANSPORT", "DEEPCOMM_TIMEOUT", "DEEPCOMM_SECRET"})
    EXPECT_EQ(keys.count(expected), 1u) << expected;
  for (const std::string& key : keys) EXPECT_TRUE(key.rfind("NCCL_", 0) == 0 || key.rfind("DEEPCOMM_", 0) == 0) << key;
}

TEST(ParamApi, TypedGettersReadTheEnvironmentWithinTheirRange) {
  ScopedEnv timeout("DEEPCOMM_BOOTSTRAP_TIMEOUT", "40000");
  ncclParamHandle_t handle = bind("DEEPCOMM_BOOTSTRAP_TIMEOUT");
  int32_t i32 = 0;
  EXPECT_EQ(ncclParamGetI32(handle, &i32), ncclSuccess);
  EXPECT_EQ(i32, 40000);
  uint64_t u64 = 0;
  EXPECT_EQ(ncclParamGetU64(handle, &u64), ncclSuccess);
  EXPECT_EQ(u64, 40000u);
  int8_t i8 = 7;
  EXPECT_EQ(ncclParamGetI8(handle, &i8), ncclInvalidArgument) << "40000 does not fit int8";
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("DEEPCOMM_BOOTSTRAP_TIMEOUT"), std::string::npos);
  EXPECT_EQ(i8, 7) << "a refused call writes nothing";
  uint16_t u16 = 0;
  EXPECT_EQ(ncclParamGetU16(handle, &u16), ncclSuccess);
  EXPECT_EQ(u16, 40000);
  int16_t i16 = 0;
  EXPECT_EQ(ncclParamGetI16(handle, &i16), ncclInvalidArgument) << "40000 does not fit int16";
  const char* text = nullptr;
  EXPECT_EQ(ncclParamGetStr(handle, &text), ncclSuccess);
  EXPECT_STREQ(text, "40000");
}

TEST(ParamApi, UnsetSettingsGiveTheirDefault) {
  unsetenv("NCCL_COMM_BLOCKING");
  uint8_t blocking = 0;
  EXPECT_EQ(ncclParamGetU8(bind("NCCL_COMM_BLOCKING"), &blocking), ncclSuccess);
  EXPECT_EQ(blocking, 1);
  const char* value = nullptr;
  int length = -1;
  unsetenv("NCCL_DEBUG");
  unsetenv("DEEPCOMM_DEBUG");
  EXPECT_EQ(ncclParamGetParameter("NCCL_DEBUG", &value, &length), ncclSuccess);
  EXPECT_STREQ(value, "WARN");
  EXPECT_EQ(length, 4);
}

TEST(ParamApi, WordsAndTextAreNotNumbers) {
  ScopedEnv transport("DEEPCOMM_TRANSPORT", "tcp");
  int64_t number = -5;
  EXPECT_EQ(ncclParamGetI64(bind("DEEPCOMM_TRANSPORT"), &number), ncclInvalidArgument);
  EXPECT_EQ(number, -5);
  const char* text = nullptr;
  EXPECT_EQ(ncclParamGetStr(bind("DEEPCOMM_TRANSPORT"), &text), ncclSuccess);
  EXPECT_STREQ(text, "tcp");
}

TEST(ParamApi, BadValueInTheEnvironmentIsAnError) {
  ScopedEnv timeout("DEEPCOMM_BOOTSTRAP_TIMEOUT", "soon");
  int32_t value = 3;
  EXPECT_EQ(ncclParamGetI32(bind("DEEPCOMM_BOOTSTRAP_TIMEOUT"), &value), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("soon"), std::string::npos) << ncclGetLastError(nullptr);
  EXPECT_EQ(value, 3);
}

TEST(ParamApi, RawBytesAreTheValueAndASmallBufferIsRefused) {
  ScopedEnv timeout("DEEPCOMM_BOOTSTRAP_TIMEOUT", "1234");
  ncclParamHandle_t handle = bind("DEEPCOMM_BOOTSTRAP_TIMEOUT");
  int64_t value = 0;
  int length = 0;
  EXPECT_EQ(ncclParamGet(handle, &value, sizeof value, &length), ncclSuccess);
  EXPECT_EQ(value, 1234);
  EXPECT_EQ(length, 8);
  int32_t small = 99;
  EXPECT_EQ(ncclParamGet(handle, &small, sizeof small, &length), ncclInvalidArgument);
  EXPECT_EQ(small, 99);
  EXPECT_EQ(length, 8) << "the size it needs";
  ScopedEnv transport("DEEPCOMM_TRANSPORT", "shm");
  char word[8] = {};
  EXPECT_EQ(ncclParamGet(bind("DEEPCOMM_TRANSPORT"), word, sizeof word, &length), ncclSuccess);
  EXPECT_EQ(length, 3);
  EXPECT_EQ(std::string(word, 3), "shm");
}

TEST(ParamApi, UnknownKeysAndForeignHandlesAreRefused) {
  ncclParamHandle_t handle = nullptr;
  EXPECT_EQ(ncclParamBind(&handle, "NCCL_NO_SUCH_SETTING"), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(nullptr)).find("NCCL_NO_SUCH_SETTING"), std::string::npos);
  EXPECT_EQ(handle, nullptr);
  const char* value = nullptr;
  int length = -1;
  EXPECT_EQ(ncclParamGetParameter("DEEPCOMM_NO_SUCH", &value, &length), ncclInvalidArgument);
  EXPECT_EQ(value, nullptr);
  int foreign = 0;
  int32_t out = 0;
  EXPECT_EQ(ncclParamGetI32(reinterpret_cast<ncclParamHandle_t>(&foreign), &out), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetI32(nullptr, &out), ncclInvalidArgument);
  EXPECT_EQ(ncclParamBind(nullptr, "NCCL_DEBUG"), ncclInvalidArgument);
  EXPECT_EQ(ncclParamBind(&handle, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGetAllParameterKeys(nullptr, &length), ncclInvalidArgument);
  EXPECT_EQ(ncclParamGet(bind("NCCL_DEBUG"), &out, -1, &length), ncclInvalidArgument);
}

TEST(ParamApi, SecretsAreNeverShown) {
  ScopedEnv secret("DEEPCOMM_SECRET", "correct-horse-battery");
  const char* value = nullptr;
  int length = 0;
  EXPECT_EQ(ncclParamGetParameter("DEEPCOMM_SECRET", &value, &length), ncclSuccess);
  EXPECT_EQ(std::string(value).find("correct-horse"), std::string::npos) << value;
  EXPECT_EQ(dump_all().find("correct-horse"), std::string::npos);
}

TEST(ParamApi, DumpListsEverySettingAndWhereItsValueCameFrom) {
  ScopedEnv timeout("DEEPCOMM_BOOTSTRAP_TIMEOUT", "4321");
  unsetenv("NCCL_COMM_BLOCKING");
  const std::string dump = dump_all();
  EXPECT_NE(dump.find("DEEPCOMM_BOOTSTRAP_TIMEOUT=4321 (environment)"), std::string::npos) << dump;
  EXPECT_NE(dump.find("NCCL_COMM_BLOCKING=1 (default)"), std::string::npos) << dump;
  const char** table = nullptr;
  int keys = 0;
  ASSERT_EQ(ncclParamGetAllParameterKeys(&table, &keys), ncclSuccess);
  size_t lines = 0;
  for (char c : dump) lines += c == '\n';
  EXPECT_EQ(lines, static_cast<size_t>(keys));
}

}  // namespace
