/* Elastic grow with DeepComm under its launcher: N ranks compute; one is killed; the survivors get
 * an error, shrink to a communicator without it, and a replacement process, started with exec by
 * one survivor, joins them by grow: the job carries on at N ranks, without a restart.
 *
 *   deepcomm-run --grace 60 -n 4 elastic_grow
 *       deepcomm-run exits with the killed rank's status (137: it reports the first rank that
 *       failed); when everything after went well, the survivors' rank 0 prints
 *       "elastic_grow: 4 ranks again, every rank right".
 *   deepcomm-run --netns H0,H1 --grace 60 -n 4 elastic_grow --replacement-netns H2
 *       the same on network-namespace hosts (tools/cluster/dc-cluster), the replacement started
 *       on another host, H2, through `ip netns exec`: a new host joins.
 *   elastic_grow --join NRANKS RANK
 *       how a survivor starts the replacement: the size and the new rank on the command line, the
 *       grow id in hex on its standard input (never on a command line: docs/security.md).
 */
#include <deepcomm/deepcomm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxRanks = 64 };

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void to_hex(const dcUniqueId* id, char* out) {
  for (int i = 0; i < DC_UNIQUE_ID_BYTES; ++i) sprintf(out + 2 * i, "%02x", (unsigned char)id->internal[i]);
}

static int from_hex(const char* hex, dcUniqueId* id) {
  if (strlen(hex) != 2 * DC_UNIQUE_ID_BYTES) return -1;
  for (int i = 0; i < DC_UNIQUE_ID_BYTES; ++i) {
    unsigned byte;
    if (sscanf(hex + 2 * i, "%2x", &byte) != 1) return -1;
    id->internal[i] = (char)byte;
  }
  return 0;
}

/* Each rank contributes rank + 1; then every rank learns whether every rank got the right sum. */
static int every_rank_right(dcComm_t comm) {
  int n = 0, me = 0;
  dcCommCount(comm, &n);
  dcCommRank(comm, &me);
  long long mine = me + 1, sum = 0;
  int ok = dcAllReduce(&mine, &sum, 1, dcInt64, dcSum, comm, NULL) == dcSuccess && sum == (long long)n * (n + 1) / 2;
  int all_ok = 0;
  if (dcAllReduce(&ok, &all_ok, 1, dcInt32, dcMin, comm, NULL) != dcSuccess) return 0;
  return all_ok;
}

/* The replacement: a fresh process with nothing but the id, the size and its rank. */
static int join(int nranks, int rank) {
  char hex[2 * DC_UNIQUE_ID_BYTES + 1];
  dcUniqueId id;
  if (!fgets(hex, sizeof hex, stdin) || from_hex(hex, &id) != 0) return 2;
  dcComm_t grown;
  if (dcCommGrow(NULL, nranks, &id, rank, &grown, NULL) != dcSuccess) {
    fprintf(stderr, "replacement: grow: %s\n", dcGetLastError());
    return 3;
  }
  const int ok = every_rank_right(grown);
  dcCommDestroy(grown);
  return ok ? 0 : 4;
}

/* Waits at most 60 s for the replacement; 1 when it exited 0. */
static int replacement_succeeded(pid_t pid) {
  int status = 0;
  for (int waited_ms = 0; waited_ms < 60000; waited_ms += 10) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    sleep_ms(10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return 0;
}

/* Starts this program as the replacement, in network namespace netns when it is not NULL, and
 * writes the id to its standard input. */
static pid_t start_replacement(const dcUniqueId* id, int nranks, const char* netns) {
  char self[4096], hex[2 * DC_UNIQUE_ID_BYTES + 1], size[16], new_rank[16];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  int id_pipe[2];
  if (length <= 0 || pipe(id_pipe) != 0) return -1;
  self[length] = '\0';
  to_hex(id, hex);
  snprintf(size, sizeof size, "%d", nranks);
  snprintf(new_rank, sizeof new_rank, "%d", nranks - 1);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(id_pipe[0], STDIN_FILENO);
    close(id_pipe[0]);
    close(id_pipe[1]);
    if (netns) execlp("ip", "ip", "netns", "exec", netns, self, "--join", size, new_rank, (char*)NULL);
    else execl(self, self, "--join", size, new_rank, (char*)NULL);
    _exit(127);
  }
  close(id_pipe[0]);
  const int written = pid > 0 && write(id_pipe[1], hex, strlen(hex)) == (ssize_t)strlen(hex);
  close(id_pipe[1]);
  return written ? pid : -1;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--join") == 0) return join(atoi(argv[2]), atoi(argv[3]));
  const char* replacement_netns = argc == 3 && strcmp(argv[1], "--replacement-netns") == 0 ? argv[2] : NULL;
  dcComm_t comm;
  if (dcCommInitFromEnv(&comm, NULL) != dcSuccess) {
    fprintf(stderr, "init: %s\n", dcGetLastError());
    return 2;
  }
  int n = 0, rank = 0;
  dcCommCount(comm, &n);
  dcCommRank(comm, &rank);
  if (n < 2 || n > kMaxRanks || !every_rank_right(comm)) return 3;
  const int victim = n / 2;
  if (rank == victim) {
    sleep_ms(100); /* the others wait in the next all-reduce */
    raise(SIGKILL);
  }
  long long x = rank, y = 0;
  if (dcAllReduce(&x, &y, 1, dcInt64, dcSum, comm, NULL) == dcSuccess) return 4; /* the death must show */

  /* Who died (its connection closes at once), then shrink without it. */
  int failed[kMaxRanks], nfailed = 0;
  for (int tries = 0; tries < 200 && nfailed == 0; ++tries) {
    dcCommFailedRanks(comm, failed, kMaxRanks, &nfailed);
    if (nfailed == 0) sleep_ms(5);
  }
  dcComm_t survivors;
  if (nfailed != 1 || dcCommShrink(comm, failed, nfailed, &survivors, NULL, DC_SHRINK_ABORT) != dcSuccess) return 5;

  /* Grow back to n: the survivors' rank 0 gets the id and starts the replacement with it. */
  int me = 0;
  dcCommRank(survivors, &me);
  dcUniqueId grow_id;
  pid_t replacement = -1;
  if (me == 0) {
    if (dcCommGrowId(survivors, &grow_id) != dcSuccess) return 6;
    replacement = start_replacement(&grow_id, n, replacement_netns);
    if (replacement < 0) return 7;
  }
  dcComm_t grown;
  if (dcCommGrow(survivors, n, me == 0 ? &grow_id : NULL, -1, &grown, NULL) != dcSuccess) {
    fprintf(stderr, "rank %d: grow: %s\n", rank, dcGetLastError());
    return 8;
  }
  int ok = every_rank_right(grown);
  if (me == 0) {
    ok = replacement_succeeded(replacement) && ok;
    if (ok) printf("elastic_grow: %d ranks again, every rank right\n", n);
  }
  dcCommDestroy(grown);
  dcCommDestroy(survivors);
  dcCommDestroy(comm);
  return ok ? 0 : 9;
}
