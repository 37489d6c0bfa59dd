// libFuzzer target: the framed message channel's state machine (TCP's), fed frames by a peer
// that proved the secret but may send anything (channel_harness.h).
#include "tests/fuzz/security/channel_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dc::fuzz::run_channel(
      data, size,
      [](boost::asio::io_context& io, std::unique_ptr<dc::FrameStream> stream) {
        return std::make_shared<dc::MessageChannel>(io, std::move(stream), 1, "tcp");
      },
      0);
}
