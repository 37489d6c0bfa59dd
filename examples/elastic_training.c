/* Elastic training with DeepComm: 6 ranks run an iterative computation whose every step needs an
 * all-reduce; one rank is killed part-way. The survivors get an error instead of hanging, learn
 * which rank died, shrink the communicator to the survivors, agree on the last step that every
 * survivor completed (a step can finish on some ranks and fail on others), roll back to it, and
 * finish with the right result.
 *
 *   elastic_training            (forks its 6 ranks; exits 0 when every survivor was right)
 */
#include <deepcomm/deepcomm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kRanks = 6, kSteps = 12, kVictim = 4, kFailStep = 5, kWidth = 1024 };

/* Each step, every live rank contributes (step + 1) per element; the model accumulates the sum. */
static int train(int rank, dcUniqueId id) {
  dcComm_t comm;
  if (dcCommInitRank(&comm, kRanks, &id, rank, NULL) != dcSuccess) return 2;
  double model[kWidth] = {0}, previous[kWidth] = {0}, grad[kWidth];
  int resumed_at = kSteps; /* first step run by the survivors alone */
  for (int step = 0; step < kSteps;) {
    if (rank == kVictim && step == kFailStep) raise(SIGKILL); /* the failure */
    for (int i = 0; i < kWidth; ++i) grad[i] = step + 1;
    dcResult_t r = dcAllReduce(grad, grad, kWidth, dcFloat64, dcSum, comm, NULL);
    if (r == dcSuccess) {
      memcpy(previous, model, sizeof model); /* the checkpoint a rollback returns to */
      for (int i = 0; i < kWidth; ++i) model[i] += grad[i];
      ++step;
      continue;
    }
    /* A peer died: find out which (its connection closes at once), shrink, redo this step. */
    fprintf(stderr, "rank %d: step %d failed: %s\n", rank, step, dcGetLastError());
    int failed[kRanks], nfailed = 0;
    for (int tries = 0; tries < 200 && nfailed == 0; ++tries) {
      dcCommFailedRanks(comm, failed, kRanks, &nfailed);
      if (nfailed == 0) usleep(10000);
    }
    dcComm_t survivors;
    if (nfailed == 0 || dcCommShrink(comm, failed, nfailed, &survivors, NULL, DC_SHRINK_DEFAULT) != dcSuccess) {
      fprintf(stderr, "rank %d: cannot recover: %s\n", rank, dcGetLastError());
      return 3;
    }
    dcCommDestroy(comm);
    comm = survivors;
    /* The failed step may have completed on some survivors: resume from the last step all of
     * them completed (they are at most one apart), rolling back those one ahead. */
    int agreed = step;
    if (dcAllReduce(&step, &agreed, 1, dcInt32, dcMin, comm, NULL) != dcSuccess) return 4;
    if (agreed < step) memcpy(model, previous, sizeof model);
    step = resumed_at = agreed;
  }
  /* Steps before the survivors resumed had 6 contributors, the rest 5. */
  double expected = 0;
  for (int step = 0; step < kSteps; ++step) expected += (step + 1) * (step < resumed_at ? kRanks : kRanks - 1);
  int count = 0;
  dcCommCount(comm, &count);
  const int right = model[0] == expected && model[kWidth - 1] == expected && count == kRanks - 1;
  printf("rank %d: finished %d steps on %d ranks, model %.0f (expected %.0f) %s\n", rank, kSteps, count, model[0],
         expected, right ? "right" : "WRONG");
  fflush(stdout);
  dcCommDestroy(comm);
  return right ? 0 : 1;
}

int main(void) {
  dcUniqueId id;
  if (dcGetUniqueId(&id) != dcSuccess) return 2;
  pid_t pids[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(train(r, id));
  }
  int ok = 1;
  const time_t deadline = time(NULL) + 60;
  for (int r = 0; r < kRanks; ++r) {
    int status = 0;
    while (waitpid(pids[r], &status, WNOHANG) == 0) {
      if (time(NULL) > deadline) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status, 0);
        break;
      }
      usleep(20000);
    }
    const int expected_death = r == kVictim;
    const int died = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (expected_death ? !died : !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) ok = 0;
  }
  printf("%s\n", ok ? "elastic run: every survivor finished with the right result" : "elastic run FAILED");
  return ok ? 0 : 1;
}
