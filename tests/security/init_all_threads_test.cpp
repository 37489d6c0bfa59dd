// ncclCommInitAll / dcCommInitAll when a rank's thread cannot be created: an error comes back at
// once (the ranks already made do not wait at the rendezvous), the process lives on, and a later
// call works. Thread creation is made to fail by interposing pthread_create in this executable
// (not under sanitizers, whose runtimes interpose it themselves).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DC_INTERPOSE_THREADS 0
#else
#define DC_INTERPOSE_THREADS 1
#endif

namespace {
std::atomic<int> g_creations_left{-1};  // -1: no limit
}

#if DC_INTERPOSE_THREADS
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  if (g_creations_left.load() == 0) return EAGAIN;
  if (g_creations_left.load() > 0) --g_creations_left;
  return real(thread, attr, start, arg);
}
#endif

namespace {

TEST(InitAll, ThreadCreationFailureIsAnErrorNotTermination) {
  if (!DC_INTERPOSE_THREADS) GTEST_SKIP() << "sanitizer runtimes interpose pthread_create";
  // Start the engine first: the only threads made below are the root's and the ranks'.
  dcComm_t warm[1];
  ASSERT_EQ(dcCommInitAll(warm, 1), dcSuccess) << dcGetLastError();
  dcCommDestroy(warm[0]);

  std::vector<dcComm_t> comms(4, reinterpret_cast<dcComm_t>(1));
  g_creations_left = 1 + 2;  // the rendezvous root and two of the four ranks
  const auto started = std::chrono::steady_clock::now();
  const dcResult_t result = dcCommInitAll(comms.data(), 4);
  g_creations_left = -1;
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(result, dcSystemError);
  EXPECT_NE(std::string(dcGetLastError()).find("cannot create the thread of rank 2"), std::string::npos)
      << dcGetLastError();
  EXPECT_LT(took, std::chrono::seconds(10)) << "the ranks made waited at the rendezvous";
  for (dcComm_t c : comms) EXPECT_EQ(c, nullptr);

  ASSERT_EQ(dcCommInitAll(comms.data(), 4), dcSuccess) << dcGetLastError();
  for (dcComm_t c : comms) dcCommDestroy(c);
}

}  // namespace
