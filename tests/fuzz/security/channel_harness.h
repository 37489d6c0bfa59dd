// Drives a MessageChannel (or ShmChannel) from a fuzzer's input with no socket and no engine thread:
// the input's first bytes are API calls made on the channel (receives and sends of a few sizes
// under a few tags), the rest is the byte stream the peer "sent". A private io_context runs the
// channel until the stream ends (the channel then closes). Whatever the bytes, nothing may be
// written outside a posted buffer (the buffers sit between guard bytes that are checked), every
// posted operation must complete exactly once, and the channel must end closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "transports/common/message_channel.h"

namespace dc::fuzz {

using MakeChannel =
    std::function<std::shared_ptr<MessageChannel>(boost::asio::io_context&, std::unique_ptr<FrameStream>)>;

// Memory frames in the stream take a descriptor: this stream hands out duplicates of one sealed
// memfd of `fd_bytes` (0: none).
int run_channel(const uint8_t* data, size_t size, const MakeChannel& make, size_t fd_bytes);

}  // namespace dc::fuzz
