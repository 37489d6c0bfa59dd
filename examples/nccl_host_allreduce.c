/* DeepComm used as NCCL on host memory, across processes.
 *
 * The parent makes the unique id (it hosts the rendezvous, and is not a rank), forks N ranks, and
 * each rank runs an all-reduce, a broadcast and a ring exchange on ordinary malloc'd memory. The
 * stream argument is accepted and ignored on host memory: calls complete before they return.
 *
 *   nccl_host_allreduce [N]        (default 4)
 */
#include <nccl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                                                  \
  do {                                                                                                               \
    ncclResult_t r_ = (call);                                                                                        \
    if (r_ != ncclSuccess) {                                                                                         \
      fprintf(stderr, "rank %d: %s failed: %s (%s)\n", rank, #call, ncclGetErrorString(r_), ncclGetLastError(NULL)); \
      return 1;                                                                                                      \
    }                                                                                                                \
  } while (0)

static int run_rank(int rank, int nranks, ncclUniqueId id) {
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, nranks, id, rank));
  const size_t count = 1 << 20;
  float* grad = malloc(count * sizeof(float));
  float* next = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) grad[i] = (float)(rank + 1);

  CHECK(ncclAllReduce(grad, grad, count, ncclFloat, ncclAvg, comm, NULL));
  const float mean = (nranks + 1) / 2.0f;
  for (size_t i = 0; i < count; ++i)
    if (grad[i] != mean) {
      fprintf(stderr, "rank %d: mean %f, expected %f\n", rank, grad[i], mean);
      return 1;
    }

  int seed = rank == 0 ? 1234 : 0;
  CHECK(ncclBcast(&seed, 1, ncclInt, 0, comm, NULL));

  /* A ring exchange: send to the next rank, receive from the previous, in one group. */
  CHECK(ncclGroupStart());
  CHECK(ncclSend(grad, count, ncclFloat, (rank + 1) % nranks, comm, NULL));
  CHECK(ncclRecv(next, count, ncclFloat, (rank + nranks - 1) % nranks, comm, NULL));
  CHECK(ncclGroupEnd());

  if (seed != 1234 || next[count - 1] != mean) {
    fprintf(stderr, "rank %d: wrong result\n", rank);
    return 1;
  }
  printf("rank %d of %d: all-reduce mean %.1f, broadcast seed %d, ring exchange ok\n", rank, nranks, mean, seed);
  free(grad);
  free(next);
  CHECK(ncclCommDestroy(comm));
  return 0;
}

int main(int argc, char** argv) {
  int nranks = argc > 1 ? atoi(argv[1]) : 4, rank = -1;
  if (nranks < 1) {
    fprintf(stderr, "usage: %s [nranks]\n", argv[0]);
    return 2;
  }
  ncclUniqueId id;
  CHECK(ncclGetUniqueId(&id));
  pid_t* pids = calloc((size_t)nranks, sizeof(pid_t));
  for (int r = 0; r < nranks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(run_rank(r, nranks, id));
  }
  int failed = 0;
  time_t deadline = time(NULL) + 120;
  for (int r = 0; r < nranks; ++r) {
    int status = 0;
    while (waitpid(pids[r], &status, WNOHANG) == 0) {
      if (time(NULL) > deadline) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status, 0);
        break;
      }
      usleep(20000);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  free(pids);
  return failed;
}
