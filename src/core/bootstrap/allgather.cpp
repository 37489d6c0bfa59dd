// A rank's side of the rendezvous: prove the secret to the root, join, then wait for every rank's
// blob.
#include <algorithm>
#include <optional>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/deadline_socket.h"
#include "src/core/bootstrap/root_registry.h"
#include "src/core/bootstrap/root_reply.h"
#include "src/core/bootstrap/unique_id_layout.h"
#include "src/core/bootstrap/wire.h"

namespace dc {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = DeadlineSocket::Clock;
using std::chrono::milliseconds;

std::string text_of(const tcp::endpoint& endpoint) {
  std::ostringstream out;
  out << endpoint;
  return out.str();
}

bool connection_dropped(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted;
}

// The client side of the handshake on a connected socket: true once the root accepted our proof,
// false when it closed the connection before its verdict (worth another try). Throws when the
// root refuses, rejects the proof or fails to prove the secret itself, and at the deadline.
bool prove_secret(DeadlineSocket& socket, const IdCredentials& credentials, handshake::Purpose purpose,
                  Clock::time_point deadline, const tcp::endpoint& root) {
  handshake::Client client(credentials.secret, purpose, credentials.session);
  handshake::Response response;
  handshake::Proof proof;
  handshake::Verdict verdict;
  auto check = [&](const error_code& ec) {
    if (ec == asio::error::timed_out)
      fail(dcSystemError, "bootstrap: timed out proving the unique id's secret to the root at " + text_of(root));
    if (ec && !connection_dropped(ec))
      fail(dcSystemError, "bootstrap: handshake with the root at " + text_of(root) + " failed: " + ec.message());
    return !ec;
  };
  if (!check(socket.write({asio::buffer(client.challenge())}, deadline))) return false;
  if (!check(socket.read(asio::buffer(response), deadline))) return false;
  const auto step = client.on_response(response, &proof);
  if (step != handshake::Client::Step::Continue)
    fail(step == handshake::Client::Step::ServerUnproven ? dcRemoteError : dcInvalidUsage,
         "bootstrap root at " + text_of(root) + " refused this rank: " +
             (step == handshake::Client::Step::OtherSession ? "the unique id's session does not match: " : "") +
             handshake::describe(step));
  if (!check(socket.write({asio::buffer(proof)}, deadline))) return false;
  if (!check(socket.read(asio::buffer(verdict), deadline))) return false;
  if (!client.on_verdict(verdict))
    fail(dcInvalidUsage, "bootstrap root at " + text_of(root) +
                             " rejected this rank's proof of the unique id's secret: the ranks hold different "
                             "secrets (another unique id, or another DEEPCOMM_SECRET)");
  return true;
}

// Connects and proves the secret. Retries while nobody listens yet (rank 0 hosting the root may
// still be starting it) and while the root drops the connection before its verdict (a root busy
// with strangers evicts its oldest unproven connections).
void connect_authenticated(DeadlineSocket& socket, const tcp::endpoint& root, const IdCredentials& credentials,
                           handshake::Purpose purpose, Clock::time_point deadline, int timeout_ms) {
  milliseconds pause{10};
  for (;;) {
    error_code ec = socket.connect(root, deadline);
    if (!ec) {
      if (prove_secret(socket, credentials, purpose, deadline, root)) return;
      ec = asio::error::connection_reset;
    }
    bool retry =
        ec == asio::error::connection_refused || ec == asio::error::connection_reset || ec == asio::error::try_again;
    if (!retry && ec != asio::error::timed_out)
      fail(dcSystemError, "cannot connect to the bootstrap root at " + text_of(root) + ": " + ec.message());
    if (ec == asio::error::timed_out || Clock::now() + pause >= deadline)
      fail(dcSystemError, "bootstrap root at " + text_of(root) + " unreachable within " + std::to_string(timeout_ms) +
                              " ms (" + ec.message() +
                              "); the process that made the unique id (rank 0 with NCCL_COMM_ID) "
                              "must be alive until every rank joined");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, milliseconds(200));
  }
}

// The reply's bytes from the socket; the first one may have been read already.
class SocketSource : public ByteSource {
 public:
  SocketSource(DeadlineSocket& socket, Clock::time_point deadline, const tcp::endpoint& root,
               std::optional<uint8_t> first)
      : socket_(socket), deadline_(deadline), root_(root), first_(first) {}

  void read(void* dst, size_t len) override {
    if (len && first_) {
      *static_cast<uint8_t*>(dst) = *first_;
      first_.reset();
      dst = static_cast<uint8_t*>(dst) + 1;
      --len;
    }
    error_code ec = socket_.read(asio::buffer(dst, len), deadline_);
    if (ec == asio::error::timed_out)
      fail(dcSystemError, "bootstrap: timed out reading the reply of the root at " + text_of(root_));
    if (ec)
      fail(dcSystemError, "bootstrap root at " + text_of(root_) + " closed the connection (" + ec.message() +
                              "); its process died or its deadline passed");
  }

 private:
  DeadlineSocket& socket_;
  Clock::time_point deadline_;
  tcp::endpoint root_;
  std::optional<uint8_t> first_;
};

// Asks the root, on a second connection, how many ranks joined; nullopt when it does not answer.
std::optional<std::string> query_progress(const tcp::endpoint& root, const IdCredentials& credentials,
                                          Clock::time_point deadline) {
  try {
    DeadlineSocket socket;
    connect_authenticated(socket, root, credentials, handshake::Purpose::RootStatus, deadline, 0);
    wire::Request request;
    request.kind = wire::RequestKind::StatusQuery;
    request.session = credentials.session;
    auto header = wire::encode_request(request);
    if (socket.write({asio::buffer(header)}, deadline)) return std::nullopt;
    SocketSource source(socket, deadline, root, std::nullopt);
    RootReply reply = read_root_reply(source, 0);
    if (reply.kind != RootReply::Kind::Status) return std::nullopt;
    return reply.text;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// How long before the deadline a rank still waiting asks the root who is missing.
milliseconds progress_margin(int timeout_ms) {
  return std::clamp(milliseconds(timeout_ms / 10), milliseconds(20), milliseconds(1000));
}

}  // namespace

std::vector<std::string> bootstrap_allgather(const dcUniqueId& id, int rank, int nranks, const std::string& blob,
                                             int timeout_ms) {
  validate_unique_id(id);
  if (nranks < 1 || nranks > wire::kMaxRanks || rank < 0 || rank >= nranks)
    fail(dcInvalidArgument,
         "bootstrap: rank " + std::to_string(rank) + " of nranks " + std::to_string(nranks) + " is out of range");
  if (timeout_ms <= 0) fail(dcInvalidArgument, "bootstrap: timeout must be positive");
  if (blob.size() > wire::kMaxBlobBytes)
    fail(dcInvalidArgument, "bootstrap: blob of " + std::to_string(blob.size()) + " bytes is over the limit of " +
                                std::to_string(wire::kMaxBlobBytes));

  const Clock::time_point deadline = Clock::now() + milliseconds(timeout_ms);
  const RootAddress root = decode_root_address(id);
  const IdCredentials credentials = unique_id_credentials(id);
  if (root.hosted_by_rank0 && rank == 0) {
    try {
      start_rendezvous_root(root.endpoint, true, credentials, milliseconds(timeout_ms));
    } catch (const Error& e) {
      fail(e.code(), std::string(e.what()) +
                         " (rank 0 hosts the root at the address of NCCL_COMM_ID "
                         "or at torchrun's MASTER_ADDR:MASTER_PORT+1)");
    }
  }

  DeadlineSocket socket;
  connect_authenticated(socket, root.endpoint, credentials, handshake::Purpose::RootJoin, deadline, timeout_ms);
  wire::Request request{wire::RequestKind::Join, credentials.session, rank, nranks, blob.size()};
  auto header = wire::encode_request(request);
  if (error_code ec = socket.write({asio::buffer(header), asio::buffer(blob)}, deadline))
    fail(dcSystemError,
         "bootstrap: cannot send the join to the root at " + text_of(root.endpoint) + ": " + ec.message());

  uint8_t kind = 0;
  error_code ec = socket.read(asio::buffer(&kind, 1), deadline - progress_margin(timeout_ms));
  std::optional<std::string> progress;
  if (ec == asio::error::timed_out) {
    progress = query_progress(root.endpoint, credentials, deadline);
    ec = socket.read(asio::buffer(&kind, 1), deadline);
  }
  if (ec == asio::error::timed_out)
    fail(dcSystemError, "bootstrap timed out after " + std::to_string(timeout_ms) + " ms: rank " +
                            std::to_string(rank) + " waited for the other ranks at the root " + text_of(root.endpoint) +
                            "; " + progress.value_or("the root did not say how many ranks joined"));
  if (ec)
    fail(dcSystemError, "bootstrap root at " + text_of(root.endpoint) +
                            " closed the connection before every rank joined (" + ec.message() + ")");

  SocketSource source(socket, deadline, root.endpoint, kind);
  RootReply reply = read_root_reply(source, nranks);
  switch (reply.kind) {
    case RootReply::Kind::Table: return std::move(reply.blobs);
    case RootReply::Kind::Error: fail(reply.code, "bootstrap failed: " + reply.text);
    case RootReply::Kind::Status: break;
  }
  fail(dcRemoteError, "bootstrap root at " + text_of(root.endpoint) + " answered a join with a status");
}

}  // namespace dc
