// libFuzzer target: the shared-memory channel's state machine (copy-through slots, registered
// regions, boards, Memory frames), fed frames by a peer that proved the secret but may send
// anything (channel_harness.h). Its descriptors are a sealed memfd of one segment's size, so
// segment and region notices of that size are taken and mapped. Single copy is off: a peer in
// another process is read only by cross-memory attach, which cannot touch this process.
#include <unistd.h>

#include "tests/fuzz/security/channel_harness.h"
#include "transports/shm/shm_channel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto regions = std::make_shared<dc::ShmRegions>();
  return dc::fuzz::run_channel(
      data, size,
      [](boost::asio::io_context& io, std::unique_ptr<dc::FrameStream> stream) {
        return std::make_shared<dc::ShmChannel>(io, std::move(stream), 1, getpid(), regions, false);
      },
      dc::ShmSegment::kBytes);
}
