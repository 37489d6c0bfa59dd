#include "src/exec/flat_collective.h"

#include <chrono>
#include <cstring>
#include <string>

#include "kernels/reduce.h"
#include "src/exec/comm_failure.h"
#include "src/exec/flat_board.h"
#include "src/exec/signature.h"
#include "src/plan/plan.h"

namespace dc {

namespace {

// Bytes one rank puts on the board for this call (the same on every rank: its size decides the
// path, so it must not depend on the rank).
uint64_t board_bytes(const OpArgs& a, int nranks) {
  const uint64_t bytes = a.count * datatype_size(a.datatype);
  switch (a.collective) {
    case dcCollReduceScatter:
    case dcCollAlltoAll:
    case dcCollScatter: return bytes * static_cast<uint64_t>(nranks);
    default: return bytes;
  }
}

// What decides the path: the bytes a rank reads off the board, which for a gather is everyone's
// input (measured: past about 1 MiB of that, the engine's single-copy ring is faster).
uint64_t board_volume(const OpArgs& a, int nranks) {
  const bool gathers = a.collective == dcCollAllGather || a.collective == dcCollGather;
  return board_bytes(a, nranks) * (gathers ? static_cast<uint64_t>(nranks) : 1);
}

// Whether this rank contributes data (the others still post, to say they arrived).
bool contributes(const OpArgs& a, int rank) {
  if (a.collective == dcCollBroadcast || a.collective == dcCollScatter) return rank == a.root;
  return true;
}

// Larger all-reduces take two rounds: each rank reduces only its block of the inputs into its
// other board buffer, then every rank copies all blocks out. Every byte is then read about three
// times per rank instead of n times.
constexpr uint64_t kTwoRoundBytes = 16 * 1024;

bool two_rounds(const OpArgs& a, int nranks) {
  return a.collective == dcCollAllReduce && a.count >= static_cast<uint64_t>(nranks) &&
         a.count * datatype_size(a.datatype) >= kTwoRoundBytes;
}

struct Block {
  uint64_t offset, count;
};

// Rank q's block of count elements (the first count % n blocks are one longer).
Block block_of(uint64_t count, int n, int q) {
  const uint64_t base = count / n, extra = count % n, uq = static_cast<uint64_t>(q);
  return {uq * base + std::min(uq, extra), base + (uq < extra ? 1 : 0)};
}

// dst = the count elements at element offset `at` of every rank's input, combined in rank order.
void combine(const FlatOp& op, FlatBoard& board, void* dst, uint64_t at, uint64_t count) {
  const OpArgs& a = op.args;
  const size_t elem = datatype_size(a.datatype);
  const int n = op.comm->nranks;
  auto input = [&](int q) { return board.buffer(q, op.round) + at * elem; };
  if (n == 1) {
    std::memcpy(dst, input(0), count * elem);
  } else {
    reduce(a.datatype, a.op, dst, input(0), input(1), count);
    for (int q = 2; q < n; ++q) reduce(a.datatype, a.op, dst, dst, input(q), count);
  }
  if (a.op == dcAvg) finalize_avg(a.datatype, dst, count, n);
}

void combine(const FlatOp& op, FlatBoard& board, void* dst, uint64_t at) { combine(op, board, dst, at, op.args.count); }

void write_output(const FlatOp& op, FlatBoard& board) {
  const OpArgs& a = op.args;
  const int n = op.comm->nranks;
  const int r = op.comm->rank;
  const size_t block = a.count * datatype_size(a.datatype);
  char* out = static_cast<char*>(a.recvbuf);
  switch (a.collective) {
    case dcCollAllReduce: return combine(op, board, out, 0);
    case dcCollReduce:
      if (r == a.root) combine(op, board, out, 0);
      return;
    case dcCollReduceScatter: return combine(op, board, out, static_cast<uint64_t>(r) * a.count);
    case dcCollBroadcast: return std::memcpy(out, board.buffer(a.root, op.round), block), void();
    case dcCollScatter: return std::memcpy(out, board.buffer(a.root, op.round) + r * block, block), void();
    case dcCollAllGather:
    case dcCollGather:
      if (a.collective == dcCollGather && r != a.root) return;
      for (int q = 0; q < n; ++q) std::memcpy(out + q * block, board.buffer(q, op.round), block);
      return;
    case dcCollAlltoAll:
      for (int q = 0; q < n; ++q) std::memcpy(out + q * block, board.buffer(q, op.round) + r * block, block);
      return;
    default: return;
  }
}

// What a wait on the board ended with.
struct Outcome {
  enum Kind { Ready, Failed, Mismatch, Departed, Timeout } kind = Ready;
  int peer = -1;
  uint64_t peer_signature = 0;
};

[[noreturn]] void fail_with(const FlatOp& op, const Outcome& o) {
  ExecComm* comm = op.comm;
  if (o.kind == Outcome::Failed) {
    Status failure = comm->error();
    throw Error(failure.code, failure.message);
  }
  const std::string call = describe_signature(op.signature);
  Status status;
  if (o.kind == Outcome::Mismatch) {
    status = Status::failure(
        dcInvalidUsage, "DeepComm: ranks called different operations as operation #" + std::to_string(op.seq) +
                            " of the communicator: rank " + std::to_string(comm->rank) + " called " + call + ", rank " +
                            std::to_string(o.peer) + " called " + describe_signature(o.peer_signature));
  } else if (o.kind == Outcome::Departed) {
    status = Status::failure(dcInvalidUsage, "DeepComm: ranks made a different number of calls: rank " +
                                                 std::to_string(o.peer) + " destroyed the communicator while rank " +
                                                 std::to_string(comm->rank) + " waits for it in operation #" +
                                                 std::to_string(op.seq) + ", " + call);
  } else {
    status = Status::failure(dcSystemError, "DeepComm: an operation made no progress within DEEPCOMM_TIMEOUT (" +
                                                std::to_string(comm->timeout_ms / 1000) +
                                                " s); a peer stalled or stopped calling");
  }
  fail_comm_from_caller(comm, status);
  Status failure = comm->error();  // the first failure wins (a peer's notice may have been earlier)
  throw Error(failure.code, failure.message);
}

// Waits until every rank posted `round` of op; throws (after failing the communicator) otherwise.
void wait_round(const FlatOp& op, uint64_t round) {
  ExecComm* comm = op.comm;
  FlatBoard& board = *comm->board;
  Outcome outcome;
  auto ready = [&] {
    bool all = true;
    for (int q = 0; q < comm->nranks; ++q) {
      if (q == comm->rank) continue;
      uint64_t signature = 0;
      const bool known = board.signature_of(q, op.seq, &signature);
      if (known && signature != op.signature) {
        outcome = Outcome{Outcome::Mismatch, q, signature};
        return true;
      }
      // A post of this round counts once the peer's history shows this very call.
      all = all && known && board.posted(q, round);
    }
    // Once every input is on the board the round is complete: a failure reported afterwards (a
    // peer that already moved on and met the end of the communicator) does not undo it.
    if (all) return true;
    if (comm->async_error.load() != dcSuccess) {
      outcome.kind = Outcome::Failed;
      return true;
    }
    if (op.seq >= comm->flat_departure.load()) {
      outcome = Outcome{Outcome::Departed, comm->flat_departed_rank.load(), 0};
      return true;
    }
    return false;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(comm->timeout_ms);
  if (!board.wait(ready, deadline)) outcome.kind = Outcome::Timeout;
  if (outcome.kind != Outcome::Ready) fail_with(op, outcome);
}

// The second round of a two-round all-reduce: reduce the own block, post it, copy every block out.
void finish_in_two_rounds(const FlatOp& op, FlatBoard& board) {
  const OpArgs& a = op.args;
  const int n = op.comm->nranks, r = op.comm->rank;
  const size_t elem = datatype_size(a.datatype);
  const Block mine = block_of(a.count, n, r);
  combine(op, board, board.buffer(r, op.round + 1), mine.offset, mine.count);
  board.post(r, op.round + 1);
  wait_round(op, op.round + 1);
  for (int q = 0; q < n; ++q) {
    const Block b = block_of(a.count, n, q);
    std::memcpy(static_cast<char*>(a.recvbuf) + b.offset * elem, board.buffer(q, op.round + 1), b.count * elem);
  }
}

}  // namespace

bool flat_eligible(const ExecComm* comm, const OpArgs& args) {
  if (!comm->board || args.count == 0 || args.compressed) return false;
  if (is_point_to_point(args.collective)) return false;
  if (is_reduction(args.collective) && (args.op < 0 || args.op >= dcNumOps)) return false;  // user ops
  return board_volume(args, comm->nranks) <= comm->board->slot_bytes();
}

void flat_post(const FlatOp& op) {
  FlatBoard& board = *op.comm->board;
  const int r = op.comm->rank;
  if (contributes(op.args, r))
    std::memcpy(board.buffer(r, op.round), op.args.sendbuf, board_bytes(op.args, op.comm->nranks));
  board.post(r, op.round);
}

uint64_t flat_rounds(const ExecComm* comm, const OpArgs& args) { return two_rounds(args, comm->nranks) ? 2 : 1; }

void flat_finish(const FlatOp& op) {
  FlatBoard& board = *op.comm->board;
  wait_round(op, op.round);
  if (two_rounds(op.args, op.comm->nranks)) return finish_in_two_rounds(op, board);
  write_output(op, board);
}

}  // namespace dc
