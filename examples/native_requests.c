/* DeepComm's native API with requests: overlap an all-reduce with computation.
 *
 * Ranks come from the launcher, no unique id passed around:
 *   deepcomm-run -n 4 ./native_requests
 *   mpirun -np 4 ./native_requests          (Open MPI, through PMIx)
 */
#include <deepcomm/deepcomm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                                           \
  do {                                                                                        \
    dcResult_t r_ = (call);                                                                   \
    if (r_ != dcSuccess) {                                                                    \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, dcGetErrorString(r_), dcGetLastError()); \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

int main(void) {
  dcComm_t comm;
  CHECK(dcCommInitFromEnv(&comm, NULL));
  int rank, nranks;
  CHECK(dcCommRank(comm, &rank));
  CHECK(dcCommCount(comm, &nranks));

  const size_t count = 4 << 20;
  double* grad = malloc(count * sizeof(double));
  for (size_t i = 0; i < count; ++i) grad[i] = rank + (double)(i % 10);

  dcRequest_t request;
  CHECK(dcAllReduce(grad, grad, count, dcFloat64, dcSum, comm, &request));

  /* Work that does not touch grad, while the all-reduce progresses. */
  double work = 0;
  int done = 0, polls = 0;
  while (!done) {
    for (int i = 0; i < 20000; ++i) work += sqrt((double)i);
    CHECK(dcTest(request, &done));
    ++polls;
  }

  const double base = nranks * (nranks - 1) / 2.0;
  for (size_t i = 0; i < count; ++i)
    if (grad[i] != base + nranks * (double)(i % 10)) {
      fprintf(stderr, "rank %d: element %zu = %f\n", rank, i, grad[i]);
      return 1;
    }
  printf("rank %d of %d: all-reduce of %zu doubles done after %d polls of overlapped work (%.0f)\n", rank, nranks,
         count, polls, work);
  free(grad);
  CHECK(dcCommDestroy(comm));
  return 0;
}
