/* Uses the installed native API: two ranks as threads, one all-reduce. */
#include <deepcomm/deepcomm.h>
#include <stdio.h>

int main(void) {
  dcComm_t comms[2];
  if (dcCommInitAll(comms, 2) != dcSuccess) return 1;
  int a[2] = {1, 2}, b[2] = {10, 20}, ra[2], rb[2];
  dcGroupStart();
  dcAllReduce(a, ra, 2, dcInt32, dcSum, comms[0], NULL);
  dcAllReduce(b, rb, 2, dcInt32, dcSum, comms[1], NULL);
  if (dcGroupEnd() != dcSuccess) return 2;
  dcCommDestroy(comms[0]);
  dcCommDestroy(comms[1]);
  printf("sum %d %d\n", ra[0], rb[1]);
  return ra[0] == 11 && rb[1] == 22 ? 0 : 3;
}
