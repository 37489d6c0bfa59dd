#include "tests/faults/fault_support.h"

#include <vector>

namespace dctest {

dcResult_t run_one(dcComm_t comm, dcCollective_t kind, int rank, int n) {
  const size_t count = 1 << 16;
  std::vector<float> in(count * n, 1.0f), out(count * n, 0.0f);
  switch (kind) {
    case dcCollAllReduce: return dcAllReduce(in.data(), out.data(), count, dcFloat32, dcSum, comm, nullptr);
    case dcCollBroadcast: return dcBroadcast(in.data(), out.data(), count, dcFloat32, 0, comm, nullptr);
    case dcCollAllGather: return dcAllGather(in.data(), out.data(), count, dcFloat32, comm, nullptr);
    case dcCollReduceScatter: return dcReduceScatter(in.data(), out.data(), count, dcFloat32, dcSum, comm, nullptr);
    case dcCollAlltoAll: return dcAlltoAll(in.data(), out.data(), count, dcFloat32, comm, nullptr);
    default: {
      dcGroupStart();
      dcSend(in.data(), count, dcFloat32, (rank + 1) % n, comm, nullptr);
      dcRecv(out.data(), count, dcFloat32, (rank + n - 1) % n, comm, nullptr);
      return dcGroupEnd();
    }
  }
}

}  // namespace dctest
