/* Uses the installed NCCL ABI and checks the version it reports. */
#include <deepcomm/nccl.h>
#include <stdio.h>

int main(void) {
  int v = 0;
  ncclGetVersion(&v);
  printf("nccl %d\n", v);
  return v == 23007 ? 0 : 1;
}
