#include "src/exec/flat_board.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <new>

#include "base/error.h"
#include "base/wake_slice.h"

namespace dc {

namespace {

constexpr uint64_t kMagic = 0x44434F4D4D42524Full;  // "DCOMMBRO"
constexpr size_t kLine = 64;
// How long a waiter keeps polling (yielding the core between polls) before it sleeps: long enough
// for peers that are a few scheduling slices behind, short against the 1 ms after which a waiting
// rank must cost under 5% of a core.
constexpr auto kSpin = std::chrono::microseconds(40);
// Sleeps are cut into slices so that a wake-up lost to a dying peer costs at most this much.
constexpr auto kSleepSlice = std::chrono::milliseconds(100);

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::nanoseconds timeout) {
  timespec ts{static_cast<time_t>(timeout.count() / 1000000000), static_cast<long>(timeout.count() % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

struct FlatBoard::Header {
  uint64_t magic;
  uint64_t nranks;
  uint64_t slot_bytes;
  alignas(kLine) std::atomic<uint32_t> wake;  // futex word: bumped by every post and wake_all
  std::atomic<uint32_t> sleepers;
};

struct FlatBoard::Slot {
  struct Entry {
    std::atomic<uint64_t> seq_plus_one;  // 0 while being rewritten
    std::atomic<uint64_t> signature;
  };
  alignas(kLine) std::atomic<uint64_t> posted_rounds;  // rounds posted so far
  alignas(kLine) Entry history[kHistory];
  // followed by the two data buffers, each slot_bytes long, 64-byte aligned
};

size_t FlatBoard::slot_stride(size_t slot_bytes) { return sizeof(Slot) + 2 * round_up(slot_bytes, kLine); }

size_t FlatBoard::segment_bytes(int nranks, size_t slot_bytes) {
  return round_up(sizeof(Header), kLine) + static_cast<size_t>(nranks) * slot_stride(slot_bytes);
}

FlatBoard::FlatBoard(UniqueFd fd, void* base, size_t bytes, size_t slot_bytes)
    : fd_(std::move(fd)), base_(base), bytes_(bytes), slot_bytes_(slot_bytes) {}

std::unique_ptr<FlatBoard> FlatBoard::create(int nranks, size_t slot_bytes) {
  const size_t bytes = segment_bytes(nranks, slot_bytes);
  UniqueFd fd = create_sealed_memfd("deepcomm-board", bytes, "DeepComm: flat board");
  void* base = map_memfd(fd.get(), bytes, true, "DeepComm: flat board");
  // The new segment is zero-filled: every counter and history entry starts empty.
  auto* h = new (base) Header();
  h->nranks = static_cast<uint64_t>(nranks);
  h->slot_bytes = slot_bytes;
  h->magic = kMagic;
  for (int r = 0; r < nranks; ++r)
    new (static_cast<char*>(base) + round_up(sizeof(Header), kLine) + r * slot_stride(slot_bytes)) Slot();
  return std::unique_ptr<FlatBoard>(new FlatBoard(std::move(fd), base, bytes, slot_bytes));
}

std::unique_ptr<FlatBoard> FlatBoard::open(UniqueFd fd, int nranks, size_t slot_bytes) {
  const size_t bytes = segment_bytes(nranks, slot_bytes);
  void* base = map_memfd(fd.get(), bytes, true, "DeepComm: flat board");
  const auto* h = static_cast<const Header*>(base);
  if (h->magic != kMagic || h->nranks != static_cast<uint64_t>(nranks) || h->slot_bytes != slot_bytes) {
    munmap(base, bytes);
    fail(dcSystemError, "DeepComm: the flat board passed by rank 0 does not match this communicator");
  }
  return std::unique_ptr<FlatBoard>(new FlatBoard(std::move(fd), base, bytes, slot_bytes));
}

FlatBoard::~FlatBoard() { munmap(base_, bytes_); }

FlatBoard::Header* FlatBoard::header() const { return static_cast<Header*>(base_); }

FlatBoard::Slot* FlatBoard::slot(int rank) const {
  return reinterpret_cast<Slot*>(static_cast<char*>(base_) + round_up(sizeof(Header), kLine) +
                                 static_cast<size_t>(rank) * slot_stride(slot_bytes_));
}

void FlatBoard::note_signature(int rank, uint64_t seq, uint64_t signature) {
  Slot::Entry& e = slot(rank)->history[seq % kHistory];
  e.seq_plus_one.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  e.signature.store(signature, std::memory_order_relaxed);
  e.seq_plus_one.store(seq + 1, std::memory_order_release);
}

bool FlatBoard::signature_of(int rank, uint64_t seq, uint64_t* signature) const {
  const Slot::Entry& e = slot(rank)->history[seq % kHistory];
  if (e.seq_plus_one.load(std::memory_order_acquire) != seq + 1) return false;
  const uint64_t s = e.signature.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (e.seq_plus_one.load(std::memory_order_relaxed) != seq + 1) return false;  // rewritten meanwhile
  *signature = s;
  return true;
}

char* FlatBoard::buffer(int rank, uint64_t round) {
  return reinterpret_cast<char*>(slot(rank) + 1) + (round & 1) * round_up(slot_bytes_, kLine);
}

void FlatBoard::post(int rank, uint64_t round) {
  slot(rank)->posted_rounds.store(round + 1, std::memory_order_release);
  header()->wake.fetch_add(1, std::memory_order_seq_cst);
  if (header()->sleepers.load(std::memory_order_seq_cst) > 0) futex_wake_all(&header()->wake);
}

bool FlatBoard::posted(int rank, uint64_t round) const {
  return slot(rank)->posted_rounds.load(std::memory_order_acquire) >= round + 1;
}

void FlatBoard::wake_all() {
  header()->wake.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&header()->wake);
}

bool FlatBoard::wait(const std::function<bool()>& ready, std::chrono::steady_clock::time_point deadline) {
  using clock = std::chrono::steady_clock;
  const auto spin_end = clock::now() + kSpin;
  while (clock::now() < spin_end) {
    if (ready()) return true;
    sched_yield();
  }
  use_short_wake_slice();  // a peer's post then preempts whatever runs on this core
  Header* h = header();
  for (;;) {
    const uint32_t seen = h->wake.load(std::memory_order_seq_cst);
    h->sleepers.fetch_add(1, std::memory_order_seq_cst);
    // Checked after announcing the sleep: a post from now on changes `wake` and ends the wait.
    if (ready()) {
      h->sleepers.fetch_sub(1, std::memory_order_seq_cst);
      return true;
    }
    const auto now = clock::now();
    if (now >= deadline) {
      h->sleepers.fetch_sub(1, std::memory_order_seq_cst);
      return false;
    }
    futex_wait(&h->wake, seen, std::min<clock::duration>(deadline - now, kSleepSlice));
    h->sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace dc
