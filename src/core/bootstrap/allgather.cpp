// A rank's side of the rendezvous: join the root, then wait for every rank's blob.
#include <algorithm>
#include <optional>
#include <sstream>
#include <thread>

#include "src/core/bootstrap.h"
#include "src/core/bootstrap/deadline_socket.h"
#include "src/core/bootstrap/root_registry.h"
#include "src/core/bootstrap/unique_id_layout.h"
#include "src/core/bootstrap/wire.h"
#include "src/base/error.h"

namespace dc {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = DeadlineSocket::Clock;
using std::chrono::milliseconds;

constexpr uint32_t kMaxMessageBytes = 1 << 20;

std::string text_of(const tcp::endpoint& endpoint) {
  std::ostringstream out;
  out << endpoint;
  return out.str();
}

// Retries while nobody listens yet: the root may still be starting (rank 0 hosting it).
void connect_to_root(DeadlineSocket& socket, const tcp::endpoint& root, Clock::time_point deadline,
                     int timeout_ms) {
  milliseconds pause{10};
  for (;;) {
    error_code ec = socket.connect(root, deadline);
    if (!ec) return;
    bool not_yet_listening = ec == asio::error::connection_refused ||
                             ec == asio::error::connection_reset || ec == asio::error::try_again;
    if (!not_yet_listening && ec != asio::error::timed_out)
      fail(dcSystemError,
           "cannot connect to the bootstrap root at " + text_of(root) + ": " + ec.message());
    if (ec == asio::error::timed_out || Clock::now() + pause >= deadline)
      fail(dcSystemError, "bootstrap root at " + text_of(root) + " unreachable within " +
                              std::to_string(timeout_ms) + " ms (" + ec.message() +
                              "); the process that made the unique id (rank 0 with NCCL_COMM_ID) "
                              "must be alive until every rank joined");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, milliseconds(200));
  }
}

void read_exactly(DeadlineSocket& socket, void* data, size_t bytes, Clock::time_point deadline,
                  const tcp::endpoint& root) {
  error_code ec = socket.read(asio::buffer(data, bytes), deadline);
  if (ec == asio::error::timed_out)
    fail(dcSystemError, "bootstrap: timed out reading the reply of the root at " + text_of(root));
  if (ec)
    fail(dcSystemError, "bootstrap root at " + text_of(root) + " closed the connection (" +
                            ec.message() + "); its process died or its deadline passed");
}

uint32_t read_u32(DeadlineSocket& socket, Clock::time_point deadline, const tcp::endpoint& root) {
  uint8_t b[4];
  read_exactly(socket, b, sizeof b, deadline, root);
  return wire::get_u32(b);
}

// Asks the root, on a second connection, how many ranks joined; nullopt when it does not answer.
std::optional<std::string> query_progress(const tcp::endpoint& root, uint64_t session,
                                          Clock::time_point deadline) {
  DeadlineSocket socket;
  wire::Request request;
  request.kind = wire::RequestKind::StatusQuery;
  request.session = session;
  auto header = wire::encode_request(request);
  uint8_t kind = 0;
  uint8_t length[4];
  if (socket.connect(root, deadline) || socket.write({asio::buffer(header)}, deadline) ||
      socket.read(asio::buffer(&kind, 1), deadline) || kind != uint8_t(wire::ReplyKind::Status) ||
      socket.read(asio::buffer(length), deadline))
    return std::nullopt;
  std::string text(std::min(wire::get_u32(length), kMaxMessageBytes), '\0');
  if (socket.read(asio::buffer(text), deadline)) return std::nullopt;
  return text;
}

[[noreturn]] void throw_root_error(DeadlineSocket& socket, Clock::time_point deadline,
                                   const tcp::endpoint& root) {
  uint32_t code = read_u32(socket, deadline, root);
  uint32_t length = read_u32(socket, deadline, root);
  if (length > kMaxMessageBytes)
    fail(dcRemoteError, "bootstrap root sent an oversized error message");
  std::string message(length, '\0');
  read_exactly(socket, message.data(), length, deadline, root);
  bool known = code > dcSuccess && code < dcNumResults && code != dcInProgress;
  fail(known ? static_cast<dcResult_t>(code) : dcRemoteError, "bootstrap failed: " + message);
}

std::vector<std::string> read_table(DeadlineSocket& socket, int nranks, Clock::time_point deadline,
                                    const tcp::endpoint& root) {
  uint32_t count = read_u32(socket, deadline, root);
  if (count != static_cast<uint32_t>(nranks))
    fail(dcRemoteError, "bootstrap root sent " + std::to_string(count) + " blobs for " +
                            std::to_string(nranks) + " ranks");
  std::vector<uint8_t> lengths(8 * size_t(count));
  read_exactly(socket, lengths.data(), lengths.size(), deadline, root);
  std::vector<std::string> blobs(count);
  for (uint32_t r = 0; r < count; ++r) {
    uint64_t length = wire::get_u64(&lengths[8 * size_t(r)]);
    if (length > wire::kMaxBlobBytes) fail(dcRemoteError, "bootstrap root sent an oversized blob");
    blobs[r].resize(length);
    read_exactly(socket, blobs[r].data(), length, deadline, root);
  }
  return blobs;
}

// How long before the deadline a rank still waiting asks the root who is missing.
milliseconds progress_margin(int timeout_ms) {
  return std::clamp(milliseconds(timeout_ms / 10), milliseconds(20), milliseconds(1000));
}

}  // namespace

std::vector<std::string> bootstrap_allgather(const dcUniqueId& id, int rank, int nranks,
                                             const std::string& blob, int timeout_ms) {
  validate_unique_id(id);
  if (nranks < 1 || nranks > wire::kMaxRanks || rank < 0 || rank >= nranks)
    fail(dcInvalidArgument, "bootstrap: rank " + std::to_string(rank) + " of nranks " +
                                std::to_string(nranks) + " is out of range");
  if (timeout_ms <= 0) fail(dcInvalidArgument, "bootstrap: timeout must be positive");
  if (blob.size() > wire::kMaxBlobBytes) fail(dcInvalidArgument, "bootstrap: blob over 1 GiB");

  const Clock::time_point deadline = Clock::now() + milliseconds(timeout_ms);
  const RootAddress root = decode_root_address(id);
  const uint64_t session = unique_id_session(id);
  if (root.hosted_by_rank0 && rank == 0) {
    try {
      start_rendezvous_root(root.endpoint, true, session, milliseconds(timeout_ms));
    } catch (const Error& e) {
      fail(e.code(), std::string(e.what()) +
                         " (rank 0 hosts the root at the address of NCCL_COMM_ID "
                         "or at torchrun's MASTER_ADDR:MASTER_PORT+1)");
    }
  }

  DeadlineSocket socket;
  connect_to_root(socket, root.endpoint, deadline, timeout_ms);
  wire::Request request{wire::RequestKind::Join, session, rank, nranks, blob.size()};
  auto header = wire::encode_request(request);
  if (error_code ec = socket.write({asio::buffer(header), asio::buffer(blob)}, deadline))
    fail(dcSystemError, "bootstrap: cannot send the join to the root at " + text_of(root.endpoint) +
                            ": " + ec.message());

  uint8_t kind = 0;
  error_code ec = socket.read(asio::buffer(&kind, 1), deadline - progress_margin(timeout_ms));
  std::optional<std::string> progress;
  if (ec == asio::error::timed_out) {
    progress = query_progress(root.endpoint, session, deadline);
    ec = socket.read(asio::buffer(&kind, 1), deadline);
  }
  if (ec == asio::error::timed_out)
    fail(dcSystemError, "bootstrap timed out after " + std::to_string(timeout_ms) + " ms: rank " +
                            std::to_string(rank) + " waited for the other ranks at the root " +
                            text_of(root.endpoint) + "; " +
                            progress.value_or("the root did not say how many ranks joined"));
  if (ec)
    fail(dcSystemError, "bootstrap root at " + text_of(root.endpoint) +
                            " closed the connection before every rank joined (" + ec.message() +
                            ")");

  switch (static_cast<wire::ReplyKind>(kind)) {
    case wire::ReplyKind::Table:
      return read_table(socket, nranks, deadline, root.endpoint);
    case wire::ReplyKind::Error:
      throw_root_error(socket, deadline, root.endpoint);
    default:
      fail(dcRemoteError, "bootstrap root at " + text_of(root.endpoint) + " sent an unknown reply");
  }
}

}  // namespace dc
