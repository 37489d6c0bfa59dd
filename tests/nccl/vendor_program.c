/* A program written for NVIDIA's NCCL, compiled against NVIDIA's nccl.h (the CUDA toolkit's 2.28.9,
 * or PyPI's 2.30.7), that runs on DeepComm's libnccl.so.2: linked to it directly, or linked to
 * NVIDIA's and given ours with LD_PRELOAD. Ranks start from that header's NCCL_CONFIG_INITIALIZER,
 * so the config has the header's size. The parent makes the unique id (it is no rank), forks the ranks and reaps them
 * within a deadline; each rank checks all-reduce, broadcast, all-gather and a send/recv ring.
 *
 * Usage: vendor_program PATH_OF_DEEPCOMM_LIBNCCL   (exit status 0 when every rank passed)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <nccl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kRanks = 3, kDeadlineSeconds = 60 };

#define CHECK(call)                                                                                                \
  do {                                                                                                             \
    ncclResult_t result_ = (call);                                                                                 \
    if (result_ != ncclSuccess) {                                                                                  \
      fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, #call, ncclGetErrorString(result_), ncclGetLastError(NULL)); \
      return 1;                                                                                                    \
    }                                                                                                              \
  } while (0)

#define EXPECT(condition, ...)            \
  do {                                    \
    if (!(condition)) {                   \
      fprintf(stderr, "rank %d: ", rank); \
      fprintf(stderr, __VA_ARGS__);       \
      fprintf(stderr, "\n");              \
      return 1;                           \
    }                                     \
  } while (0)

/* Whether the ncclGetVersion that this process's calls bind to lives in the expected file. */
static int nccl_comes_from(const char* expected) {
  void* symbol = dlsym(RTLD_DEFAULT, "ncclGetVersion");
  Dl_info info;
  char loaded[PATH_MAX], wanted[PATH_MAX];
  if (symbol == NULL || dladdr(symbol, &info) == 0 || info.dli_fname == NULL) return 0;
  if (realpath(info.dli_fname, loaded) == NULL || realpath(expected, wanted) == NULL) return 0;
  printf("ncclGetVersion comes from %s\n", loaded);
  return strcmp(loaded, wanted) == 0;
}

static int check_all_reduce(int rank, ncclComm_t comm) {
  static const size_t counts[] = {1, 7, 1000, 65537};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const size_t count = counts[c];
    float* send = malloc(count * sizeof(float));
    float* recv = malloc(count * sizeof(float));
    EXPECT(send != NULL && recv != NULL, "out of memory");
    for (size_t i = 0; i < count; ++i) {
      send[i] = (float)(rank + 1 + (int)(i % 5));
      recv[i] = -1.0f;
    }
    CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, NULL));
    for (size_t i = 0; i < count; ++i) {
      /* sum over ranks r of (r + 1 + i % 5), exact in float */
      const float expected = (float)(kRanks * (kRanks + 1) / 2 + kRanks * (int)(i % 5));
      EXPECT(recv[i] == expected, "all-reduce count %zu: [%zu] = %g, expected %g", count, i, recv[i], expected);
    }
    free(send);
    free(recv);
  }
  return 0;
}

static int check_broadcast(int rank, ncclComm_t comm) {
  enum { kCount = 33, kRoot = 1 };
  int send[kCount], recv[kCount];
  for (int i = 0; i < kCount; ++i) {
    send[i] = rank == kRoot ? 7000 + i : -1;
    recv[i] = -2;
  }
  CHECK(ncclBroadcast(send, recv, kCount, ncclInt32, kRoot, comm, NULL));
  for (int i = 0; i < kCount; ++i) {
    EXPECT(recv[i] == 7000 + i, "broadcast: [%d] = %d, expected %d", i, recv[i], 7000 + i);
  }
  return 0;
}

static int check_all_gather(int rank, ncclComm_t comm) {
  enum { kCount = 5 };
  double send[kCount], recv[kCount * kRanks];
  for (int i = 0; i < kCount; ++i) send[i] = rank * 100 + i;
  for (int i = 0; i < kCount * kRanks; ++i) recv[i] = -1.0;
  CHECK(ncclAllGather(send, recv, kCount, ncclDouble, comm, NULL));
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) {
      EXPECT(recv[r * kCount + i] == r * 100 + i, "all-gather: block %d [%d] = %g", r, i, recv[r * kCount + i]);
    }
  }
  return 0;
}

/* Each rank sends to the next and receives from the previous, in one group. */
static int check_ring(int rank, ncclComm_t comm) {
  enum { kCount = 1025 };
  static long long send[kCount], recv[kCount];
  const int next = (rank + 1) % kRanks, previous = (rank + kRanks - 1) % kRanks;
  for (int i = 0; i < kCount; ++i) {
    send[i] = rank * 1000000LL + i;
    recv[i] = -1;
  }
  CHECK(ncclGroupStart());
  CHECK(ncclSend(send, kCount, ncclInt64, next, comm, NULL));
  CHECK(ncclRecv(recv, kCount, ncclInt64, previous, comm, NULL));
  CHECK(ncclGroupEnd());
  for (int i = 0; i < kCount; ++i) {
    EXPECT(recv[i] == previous * 1000000LL + i, "ring: [%d] = %lld from rank %d", i, recv[i], previous);
  }
  return 0;
}

static int run_rank(int rank, ncclUniqueId id) {
  ncclComm_t comm = NULL;
  int count = 0, user_rank = -1;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  config.commName = "vendor_program";
  CHECK(ncclCommInitRankConfig(&comm, kRanks, id, rank, &config));
  CHECK(ncclCommCount(comm, &count));
  CHECK(ncclCommUserRank(comm, &user_rank));
  EXPECT(count == kRanks && user_rank == rank, "count %d rank %d", count, user_rank);
  if (check_all_reduce(rank, comm) || check_broadcast(rank, comm) || check_all_gather(rank, comm) ||
      check_ring(rank, comm)) {
    return 1;
  }
  CHECK(ncclCommDestroy(comm));
  return 0;
}

static double seconds_until(const struct timespec* deadline) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(deadline->tv_sec - now.tv_sec) + (deadline->tv_nsec - now.tv_nsec) / 1e9;
}

/* Reaps the ranks (pid <= 0: not started); kills those still running at the deadline. Returns
 * how many failed. */
static int reap_ranks(pid_t* pids, const sigset_t* sigchld) {
  struct timespec deadline;
  int remaining = kRanks, failed = 0;
  for (int r = 0; r < kRanks; ++r) {
    if (pids[r] > 0) continue;
    fprintf(stderr, "rank %d was not started\n", r);
    --remaining;
    ++failed;
  }
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += kDeadlineSeconds;
  while (remaining > 0) {
    for (int r = 0; r < kRanks; ++r) {
      int status = 0;
      if (pids[r] <= 0 || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      pids[r] = 0;
      --remaining;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
        ++failed;
      }
    }
    const double left = seconds_until(&deadline);
    if (remaining == 0) break;
    if (left <= 0) {
      for (int r = 0; r < kRanks; ++r) {
        if (pids[r] <= 0) continue;
        fprintf(stderr, "rank %d still running after %d s: killed\n", r, kDeadlineSeconds);
        kill(pids[r], SIGKILL);
        waitpid(pids[r], NULL, 0);
        ++failed;
      }
      break;
    }
    /* SIGCHLD is blocked, so an exit between waitpid and here stays pending: no lost wakeup. */
    struct timespec timeout = {(time_t)left, (long)((left - (time_t)left) * 1e9)};
    sigtimedwait(sigchld, NULL, &timeout);
  }
  return failed;
}

int main(int argc, char** argv) {
  const int rank = -1; /* the parent, for CHECK's messages */
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH_OF_DEEPCOMM_LIBNCCL\n", argv[0]);
    return 2;
  }
  EXPECT(nccl_comes_from(argv[1]), "the NCCL in use is not %s", argv[1]);
  int version = 0;
  CHECK(ncclGetVersion(&version));
  /* DeepComm implements 2.30.7, at least the version of the header this was compiled against. */
  EXPECT(version == NCCL_VERSION(2, 30, 7) && version >= NCCL_VERSION_CODE,
         "version %d, expected 23007 (compiled against %d)", version, NCCL_VERSION_CODE);

  ncclUniqueId id;
  CHECK(ncclGetUniqueId(&id));
  sigset_t sigchld;
  sigemptyset(&sigchld);
  sigaddset(&sigchld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &sigchld, NULL);
  fflush(NULL);
  pid_t pids[kRanks];
  for (int r = 0; r < kRanks; ++r) pids[r] = -1;
  for (int r = 0; r < kRanks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      sigprocmask(SIG_UNBLOCK, &sigchld, NULL);
      const int status = run_rank(r, id);
      fflush(NULL);
      _exit(status);
    }
    if (pids[r] < 0) {
      perror("fork");
      break;
    }
  }
  const int failed = reap_ranks(pids, &sigchld);
  if (failed != 0) {
    fprintf(stderr, "%d of %d ranks failed\n", failed, kRanks);
    return 1;
  }
  printf("%d ranks passed\n", kRanks);
  return 0;
}
