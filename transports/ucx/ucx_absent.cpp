// Built instead of the UCX transport where CMake found no UCX (libucx-dev).
#include "transports/transport.h"

namespace dc {

std::unique_ptr<Transport> make_ucx_transport(const TransportOptions&) {
  fail(dcInvalidUsage,
       "DeepComm: DEEPCOMM_TRANSPORT asks for UCX, but this DeepComm was built without it "
       "(install libucx-dev and rebuild)");
}

}  // namespace dc
