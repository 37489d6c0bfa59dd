// The UCX registration cache (transports/ucx/ucx_registration_cache.h) with a recording registrar
// in place of ucp_mem_map, over real mappings: a range unmapped and mapped again at the same
// address is registered afresh, never served from the stale entry; pieces of one buffer share an
// entry; a dropped entry stays registered while a transfer holds it; the bounds hold; more unmapped
// ranges than the ring holds still drop what they cover, and only that.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>

#include "base/error.h"
#include "transports/ucx/ucx_registration_cache.h"

namespace {

using dc::UcxRegistrationCache;

// Hands out handles 1, 2, ... and remembers which are registered, and over which range.
struct Registrar {
  struct Range {
    uintptr_t begin, end;
  };
  std::map<uintptr_t, Range> live;
  uintptr_t next = 1;
  bool failing = false;

  UcxRegistrationCache make(size_t max_entries = UcxRegistrationCache::kMaxEntries,
                            size_t max_bytes = UcxRegistrationCache::kMaxBytes) {
    return UcxRegistrationCache(
        [this](void* base, size_t size) -> void* {
          if (failing) dc::fail(dcSystemError, "registration refused by the test");
          const uintptr_t h = next++;
          live[h] = Range{reinterpret_cast<uintptr_t>(base), reinterpret_cast<uintptr_t>(base) + size};
          return reinterpret_cast<void*>(h);
        },
        [this](void* h) { live.erase(reinterpret_cast<uintptr_t>(h)); }, max_entries, max_bytes);
  }
  bool registered(const UcxRegistrationCache::Lease& l) const {
    return live.count(reinterpret_cast<uintptr_t>(l->handle)) > 0;
  }
};

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

char* map_pages(size_t bytes, void* at = nullptr) {
  void* p =
      mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

TEST(UcxRegistrationCache, OneBufferIsRegisteredOnce) {
  Registrar r;
  UcxRegistrationCache cache = r.make();
  char* buf = map_pages(1 << 20);
  ASSERT_NE(buf, nullptr);
  auto first = cache.acquire(buf + 100, 5000);
  auto again = cache.acquire(buf + 100, 5000);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->handle, again->handle);
  EXPECT_EQ(cache.stats().registrations, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
  // Whole pages around the range.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first->begin) % kPage, 0u);
  EXPECT_LE(first->begin, buf + 100);
  EXPECT_GE(first->begin + first->size, buf + 5100);
  munmap(buf, 1 << 20);
}

TEST(UcxRegistrationCache, PiecesOfOneBufferShareOneEntry) {
  Registrar r;
  UcxRegistrationCache cache = r.make();
  const size_t bytes = 4 << 20;
  char* buf = map_pages(bytes);
  ASSERT_NE(buf, nullptr);
  for (size_t off = 0; off < bytes; off += bytes / 4) ASSERT_TRUE(cache.acquire(buf + off, bytes / 4));
  EXPECT_EQ(cache.entries(), 1u);
  auto whole = cache.acquire(buf, bytes);
  EXPECT_EQ(whole->begin, buf);
  EXPECT_EQ(whole->size, bytes);
  EXPECT_EQ(cache.stats().registrations, 4u);  // each piece grew the entry; the whole was a hit
  EXPECT_EQ(r.live.size(), 1u);                // the grown-over entries were unregistered
  munmap(buf, bytes);
}

// The user frees a buffer and maps another at the same address: its registration is made anew.
TEST(UcxRegistrationCache, UnmappedThenMappedAgainAtTheSameAddressIsRegisteredAfresh) {
  Registrar r;
  UcxRegistrationCache cache = r.make();
  const size_t bytes = 1 << 20;
  char* buf = map_pages(bytes);
  ASSERT_NE(buf, nullptr);
  const void* old_handle = cache.acquire(buf, bytes)->handle;
  cache.unmapped(buf, bytes);  // what UCX's memory event reports before munmap
  ASSERT_EQ(munmap(buf, bytes), 0);
  ASSERT_EQ(map_pages(bytes, buf), buf) << "the address could not be mapped again";
  auto fresh = cache.acquire(buf, bytes);
  ASSERT_TRUE(fresh);
  EXPECT_NE(fresh->handle, old_handle);
  EXPECT_EQ(cache.stats().registrations, 2u);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(r.live.count(reinterpret_cast<uintptr_t>(old_handle)), 0u) << "the stale registration was kept";
  munmap(buf, bytes);
}

// Part of a registered range goes (a shrinking brk, a partial munmap): the whole entry goes.
TEST(UcxRegistrationCache, APartialUnmapDropsTheEntryAndNothingBeside) {
  Registrar r;
  UcxRegistrationCache cache = r.make();
  char* a = map_pages(8 * kPage);
  ASSERT_NE(a, nullptr);
  auto left = cache.acquire(a, kPage);
  auto right = cache.acquire(a + 4 * kPage, kPage);  // not touching: an entry of its own
  ASSERT_EQ(cache.entries(), 2u);
  cache.unmapped(a + 4 * kPage + 10, 1);
  left.reset();
  right.reset();
  EXPECT_TRUE(cache.acquire(a, kPage));
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);  // the left entry survived
  munmap(a, 8 * kPage);
}

TEST(UcxRegistrationCache, ADroppedEntryStaysRegisteredWhileATransferHoldsIt) {
  Registrar r;
  UcxRegistrationCache cache = r.make();
  char* buf = map_pages(kPage);
  ASSERT_NE(buf, nullptr);
  auto in_flight = cache.acquire(buf, kPage);
  cache.unmapped(buf, kPage);
  EXPECT_TRUE(cache.acquire(buf + kPage / 2, 1));  // applies the event: the entry is dropped
  EXPECT_TRUE(r.registered(in_flight)) << "unregistered under a transfer";
  const uintptr_t handle = reinterpret_cast<uintptr_t>(in_flight->handle);
  in_flight.reset();
  EXPECT_EQ(r.live.count(handle), 0u);
  munmap(buf, kPage);
}

TEST(UcxRegistrationCache, KeepsAtMostItsBoundsLeastRecentlyUsedOut) {
  Registrar r;
  UcxRegistrationCache cache = r.make(2);
  char* buf = map_pages(16 * kPage);
  ASSERT_NE(buf, nullptr);
  const void* first = cache.acquire(buf, kPage)->handle;
  const void* second = cache.acquire(buf + 4 * kPage, kPage)->handle;
  EXPECT_EQ(cache.acquire(buf, kPage)->handle, first);  // the first is now the most recent
  cache.acquire(buf + 8 * kPage, kPage);
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.stats().evicted, 1u);
  EXPECT_EQ(r.live.count(reinterpret_cast<uintptr_t>(second)), 0u);
  EXPECT_EQ(r.live.count(reinterpret_cast<uintptr_t>(first)), 1u);

  UcxRegistrationCache by_bytes = r.make(100, 3 * kPage);
  by_bytes.acquire(buf, 2 * kPage);
  by_bytes.acquire(buf + 8 * kPage, 2 * kPage);
  EXPECT_EQ(by_bytes.entries(), 1u);
  munmap(buf, 16 * kPage);
}

// A cached entry over one page, and a mapping apart where unmapped ranges land without touching it.
class RingOfUnmappedRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(buf, nullptr);
    ASSERT_NE(far, nullptr);
    ASSERT_TRUE(cache.acquire(buf, kPage));
  }
  void TearDown() override {
    munmap(far, 512 * kPage);
    munmap(buf, kPage);
  }
  // `count` one-byte ranges in `far`, none touching another.
  void unmap_far(int count) {
    for (int i = 0; i < count; ++i) cache.unmapped(far + 2 * i * kPage, 1);
  }

  Registrar r;
  UcxRegistrationCache cache = r.make();
  char* buf = map_pages(kPage);
  char* far = map_pages(512 * kPage);
};

// More unmapped ranges between two lookups than the ring has slots: they are merged, and only
// entries inside what they cover go.
TEST_F(RingOfUnmappedRanges, EventsBeyondTheRingDropOnlyWhatTheyCover) {
  unmap_far(200);
  cache.acquire(buf, kPage);
  EXPECT_EQ(cache.stats().invalidated, 0u);
  EXPECT_EQ(cache.stats().hits, 1u);
}

TEST_F(RingOfUnmappedRanges, AnEventOverAnEntryDropsItAlsoWhenTheRingIsFull) {
  unmap_far(100);
  cache.unmapped(buf + 10, 1);
  cache.acquire(buf, kPage);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  EXPECT_EQ(cache.stats().registrations, 2u);
}

TEST(UcxRegistrationCache, AFailedRegistrationLeavesTheBufferStaged) {
  Registrar r;
  UcxRegistrationCache cache = r.make();
  char* buf = map_pages(kPage);
  ASSERT_NE(buf, nullptr);
  r.failing = true;
  EXPECT_FALSE(cache.acquire(buf, kPage));
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_FALSE(cache.acquire(nullptr, 10));
  EXPECT_FALSE(cache.acquire(buf, 0));
  r.failing = false;
  EXPECT_TRUE(cache.acquire(buf, kPage));
  munmap(buf, kPage);
}

TEST(UcxRegistrationCache, ClearingUnregistersWhatNoTransferHolds) {
  Registrar r;
  char* buf = map_pages(4 * kPage);
  ASSERT_NE(buf, nullptr);
  UcxRegistrationCache::Lease held;
  {
    UcxRegistrationCache cache = r.make();
    held = cache.acquire(buf, kPage);
    cache.acquire(buf + 2 * kPage, kPage);
  }
  EXPECT_EQ(r.live.size(), 1u);
  EXPECT_TRUE(r.registered(held));
  held.reset();
  EXPECT_TRUE(r.live.empty());
  munmap(buf, 4 * kPage);
}

}  // namespace
