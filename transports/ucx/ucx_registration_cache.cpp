#include "transports/ucx/ucx_registration_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "base/error.h"
#include "base/log.h"

namespace dc {

namespace {

uintptr_t page_size() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

uintptr_t end_of(const UcxRegistrationCache::Registration& r) { return reinterpret_cast<uintptr_t>(r.begin) + r.size; }

}  // namespace

UcxRegistrationCache::UcxRegistrationCache(Register reg, Unregister unreg, size_t max_entries, size_t max_bytes)
    : register_(std::move(reg)), unregister_(std::move(unreg)), max_entries_(max_entries), max_bytes_(max_bytes) {}

UcxRegistrationCache::~UcxRegistrationCache() {
  // Moved out first: an unregistration may unmap memory and raise an event here. Leases keep their
  // registrations until released.
  std::vector<Entry> dropped;
  dropped.swap(entries_);
}

UcxRegistrationCache::Lease UcxRegistrationCache::acquire(const void* buf, size_t len) {
  if (!buf || !len) return nullptr;
  drop_unmapped();
  const uintptr_t from = reinterpret_cast<uintptr_t>(buf), to = from + len;
  for (Entry& e : entries_) {
    if (reinterpret_cast<uintptr_t>(e.registration->begin) <= from && to <= end_of(*e.registration)) {
      e.last_use = ++clock_;
      ++stats_.hits;
      return e.registration;
    }
  }
  // Whole pages, grown over every cached entry it overlaps or touches (theirs are mapped too).
  uintptr_t begin = from & ~(page_size() - 1), end = (to + page_size() - 1) & ~(page_size() - 1);
  for (bool grew = true; grew;) {
    grew = false;
    for (const Entry& e : entries_) {
      const uintptr_t b = reinterpret_cast<uintptr_t>(e.registration->begin), en = end_of(*e.registration);
      if (b > end || en < begin || (b >= begin && en <= end)) continue;
      begin = std::min(begin, b);
      end = std::max(end, en);
      grew = true;
    }
  }
  auto registration = std::make_shared<Registration>();
  try {
    registration->handle = register_(reinterpret_cast<void*>(begin), end - begin);
  } catch (const Error& e) {
    DC_INFO("%s; the buffer at %p is staged", e.what(), buf);
    return nullptr;
  }
  registration->begin = reinterpret_cast<const char*>(begin);
  registration->size = end - begin;
  registration->unregister = unregister_;
  ++stats_.registrations;
  // The entries it covers are dropped (their leases keep them registered until released).
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const Entry& e) {
                                  return reinterpret_cast<uintptr_t>(e.registration->begin) >= begin &&
                                         end_of(*e.registration) <= end;
                                }),
                 entries_.end());
  entries_.push_back(Entry{registration, ++clock_});
  keep_within_bounds();
  return registration;
}

void UcxRegistrationCache::unmapped(const void* addr, size_t len) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr), end = begin + len;
  std::lock_guard<std::mutex> lock(pending_mutex_);
  has_pending_.store(true, std::memory_order_release);
  // A range touching a recorded one widens it (an allocator freeing neighbouring blocks).
  for (size_t i = 0; i < pending_count_; ++i) {
    Range& r = pending_[i];
    if (r.begin <= end && begin <= r.end) {
      r = Range{std::min(r.begin, begin), std::max(r.end, end)};
      return;
    }
  }
  if (pending_count_ < kPendingRanges) {
    pending_[pending_count_++] = Range{begin, end};
    return;
  }
  // Full: widen the recorded range that grows least. Entries in the gap it spans are dropped too,
  // and only cost a registration again.
  size_t best = 0;
  uintptr_t best_growth = UINTPTR_MAX;
  for (size_t i = 0; i < kPendingRanges; ++i) {
    const Range& r = pending_[i];
    const uintptr_t growth = (std::max(r.end, end) - std::min(r.begin, begin)) - (r.end - r.begin);
    if (growth < best_growth) {
      best_growth = growth;
      best = i;
    }
  }
  Range& r = pending_[best];
  r = Range{std::min(r.begin, begin), std::max(r.end, end)};
}

void UcxRegistrationCache::drop_unmapped() {
  if (!has_pending_.load(std::memory_order_acquire)) return;
  std::array<Range, kPendingRanges> ranges;
  size_t count = 0;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    ranges = pending_;
    count = std::exchange(pending_count_, 0);
    has_pending_.store(false, std::memory_order_relaxed);
  }
  for (size_t i = 0; i < count; ++i) drop_overlapping(ranges[i].begin, ranges[i].end);
}

void UcxRegistrationCache::drop_overlapping(uintptr_t begin, uintptr_t end) {
  std::vector<Entry> dropped;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(it->registration->begin), en = end_of(*it->registration);
    if (b < end && begin < en) {
      dropped.push_back(std::move(*it));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  stats_.invalidated += dropped.size();
}

void UcxRegistrationCache::keep_within_bounds() {
  std::vector<Entry> dropped;
  while (entries_.size() > 1 && (entries_.size() > max_entries_ || cached_bytes() > max_bytes_)) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
    dropped.push_back(std::move(*oldest));
    entries_.erase(oldest);
    ++stats_.evicted;
  }
}

size_t UcxRegistrationCache::cached_bytes() const {
  size_t bytes = 0;
  for (const Entry& e : entries_) bytes += e.registration->size;
  return bytes;
}

}  // namespace dc
