#include "transports/shm/shm_channel.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace dc {

ShmChannel::ShmChannel(boost::asio::io_context& io, std::unique_ptr<FrameStream> stream, int peer, pid_t peer_pid,
                       std::shared_ptr<ShmRegions> regions, bool single_copy)
    : MessageChannel(io, std::move(stream), peer, "shm"),
      peer_pid_(peer_pid),
      regions_(std::move(regions)),
      single_copy_(single_copy) {
  for (size_t i = 0; i < ShmSegment::kSlots; ++i) free_slots_.push_back(i);
}

ShmChannel::~ShmChannel() {
  for (auto& [id, region] : imports_) munmap(const_cast<char*>(region.local), region.size);
}

int ShmChannel::copy_from_peer(void* dst, uint64_t src, size_t len) {
  if (peer_pid_ == getpid()) {  // threads as ranks: one address space
    std::memcpy(dst, reinterpret_cast<const void*>(src), len);
    return 0;
  }
  size_t done = 0;
  while (done < len) {
    iovec local{static_cast<char*>(dst) + done, len - done};
    iovec remote{reinterpret_cast<void*>(src + done), len - done};
    const ssize_t n = process_vm_readv(peer_pid_, &local, 1, &remote, 1, 0);
    if (n < 0) return errno;
    if (n == 0) return EFAULT;
    done += static_cast<size_t>(n);
  }
  return 0;
}

int ShmChannel::stream_from_peer(const PieceSink& sink, uint64_t src, size_t len) {
  if (peer_pid_ == getpid()) {  // threads as ranks: the sender's buffer is readable in place
    hand_over(sink, reinterpret_cast<const char*>(src), 0, len);
    return 0;
  }
  char* piece = piece_buffer();
  for (size_t offset = 0; offset < len; offset += kPieceBytes) {
    const size_t n = std::min(kPieceBytes, len - offset);
    if (const int err = copy_from_peer(piece, src + offset, n)) return err;
    sink(piece, offset, n);
  }
  return 0;
}

TransportCounters ShmChannel::counters() const {
  TransportCounters c = MessageChannel::counters();
  c.bytes_received_staged = staged_bytes_.load();
  c.bytes_received_mapped = mapped_bytes_.load();
  return c;
}

void ShmChannel::send_memory(MemoryKind kind, uint64_t key, uint64_t address, size_t bytes, UniqueFd fd) {
  FrameHeader h;
  h.type = FrameType::Memory;
  h.aux = static_cast<uint64_t>(kind);
  h.id = key;
  h.length = bytes;
  h.offset = address;
  enqueue(h, nullptr, 0, nullptr, std::move(fd));
}

void ShmChannel::describe_rendezvous(FrameHeader& rts, const void* buf, size_t len) {
  const ExportedRegion* region = regions_->find_export(buf, len);
  if (!region) return;
  if (!regions_passed_.count(region->id)) {
    UniqueFd fd = duplicate_fd(region->fd);
    if (!fd) return;
    // Queued before the RTS, so the peer has mapped the region when it reads the RTS.
    send_memory(MemoryKind::Region, region->id, reinterpret_cast<uintptr_t>(region->base), region->size, std::move(fd));
    regions_passed_.insert(region->id);
  }
  rts.flags |= kFrameInRegion;
  rts.offset = region->id;
}

void ShmChannel::withdraw_region(uint64_t id) {
  if (!regions_passed_.erase(id)) return;
  FrameHeader h;
  h.type = FrameType::RegionGone;
  h.aux = id;
  enqueue(h, nullptr, 0);
}

bool ShmChannel::pass_memory(uint64_t key, int fd, size_t bytes) {
  UniqueFd copy = duplicate_fd(fd);
  if (closed() || !copy) return false;
  send_memory(MemoryKind::Board, key, 0, bytes, std::move(copy));
  return true;
}

void ShmChannel::receive_memory(uint64_t key, size_t bytes, std::function<void(int fd)> done) {
  auto arrived = boards_.find(key);
  if (arrived != boards_.end()) {
    auto [fd, size] = std::move(arrived->second);
    boards_.erase(arrived);
    return done(size == bytes ? fd.release() : -1);
  }
  if (closed()) return done(-1);
  auto previous = board_waiters_.find(key);
  if (previous != board_waiters_.end()) {
    auto old = std::move(previous->second.done);
    board_waiters_.erase(previous);
    old(-1);
  }
  board_waiters_[key] = BoardWaiter{bytes, std::move(done)};
}

void ShmChannel::on_memory(const FrameHeader& h) {
  UniqueFd fd(stream().take_fd());
  if (!fd) return protocol_error("a memory notice arrived without its descriptor");
  if (h.length == 0 || h.length > kMaxMemoryBytes)
    return protocol_error("a memory notice of " + std::to_string(h.length) + " bytes");
  const std::string problem = check_received_memfd(fd.get(), h.length);
  if (!problem.empty()) return protocol_error("a memory notice's descriptor is refused: " + problem);
  switch (static_cast<MemoryKind>(h.aux)) {
    case MemoryKind::Region: {
      if (imports_.count(h.id)) return protocol_error("a second notice for a region that is mapped");
      void* local = mmap(nullptr, h.length, PROT_READ, MAP_SHARED, fd.get(), 0);
      if (local == MAP_FAILED) {
        DC_INFO("shm transport: cannot map region %llu of rank %d: %s", static_cast<unsigned long long>(h.id), peer(),
                std::strerror(errno));
        return;  // its RTS then takes another path
      }
      imports_[h.id] = ImportedRegion{h.offset, h.length, static_cast<const char*>(local)};
      return;
    }
    case MemoryKind::Segment:
      if (in_segment_ || h.length != ShmSegment::kBytes) return protocol_error("an unexpected segment notice");
      try {
        in_segment_ = ShmSegment::adopt(fd.get());
      } catch (const Error& e) {
        protocol_error(e.what());
      }
      return;
    case MemoryKind::Board: {
      auto waiter = board_waiters_.find(h.id);
      if (waiter != board_waiters_.end()) {
        BoardWaiter w = std::move(waiter->second);
        board_waiters_.erase(waiter);
        return w.done(w.bytes == h.length ? fd.release() : -1);
      }
      if (boards_.count(h.id) || boards_.size() >= kMaxWaitingBoards)
        return protocol_error("a board notice repeated, or too many untaken");
      boards_[h.id] = {std::move(fd), h.length};
      return;
    }
  }
  protocol_error("a memory notice of an unknown kind");
}

void ShmChannel::drop_import(uint64_t id) {
  auto it = imports_.find(id);
  if (it == imports_.end()) return;
  munmap(const_cast<char*>(it->second.local), it->second.size);
  imports_.erase(it);
}

bool ShmChannel::copy_from_region(const RecvPtr& op, const FrameHeader& rts) {
  auto it = imports_.find(rts.offset);
  if (it == imports_.end()) return false;
  const ImportedRegion& region = it->second;
  if (rts.aux < region.remote_base || rts.aux - region.remote_base > region.size ||
      rts.length > region.size - (rts.aux - region.remote_base)) {
    return false;
  }
  const char* from = region.local + (rts.aux - region.remote_base);
  if (op->sink) hand_over(op->sink, from, 0, rts.length);  // read in place: no copy at all
  else if (rts.length) std::memcpy(op->buf, from, rts.length);
  ++mapped_copies_;
  mapped_bytes_ += rts.length;
  finish_recv(op, Status::success(), rts.length);
  send_fin(rts, false);
  return true;
}

void ShmChannel::rendezvous_matched(const RecvPtr& op, const FrameHeader& rts) {
  if ((rts.flags & kFrameInRegion) && copy_from_region(op, rts)) return;
  if (single_copy_) {
    const int err =
        op->sink ? stream_from_peer(op->sink, rts.aux, rts.length) : copy_from_peer(op->buf, rts.aux, rts.length);
    if (err == 0) {
      ++direct_copies_;
      finish_recv(op, Status::success(), rts.length);
      return send_fin(rts, false);
    }
    if (err != EPERM && err != ENOSYS && err != EACCES) {
      // The peer is gone (ESRCH) or its buffer is not mapped: this message is lost.
      finish_recv(op,
                  Status::failure(err == ESRCH ? dcRemoteError : dcSystemError,
                                  "shm connection to rank " + std::to_string(peer()) +
                                      ": cross-memory read failed: " + std::strerror(err)),
                  0);
      return send_fin(rts, true);
    }
    DC_INFO("shm transport: cross-memory attach to rank %d forbidden (%s); copying through shared memory", peer(),
            std::strerror(err));
    single_copy_ = false;
  }
  answer_cts(op, rts);
}

void ShmChannel::send_fin(const FrameHeader& rts, bool failed) {
  FrameHeader h;
  h.type = FrameType::Fin;
  h.tag = rts.tag;
  h.id = rts.id;
  h.flags = failed ? uint32_t{kFrameFailed} : 0u;
  enqueue(h, nullptr, 0);
}

void ShmChannel::clear_to_send(const SendPtr& op, const FrameHeader& cts) {
  slot_sends_.push_back(SlotSend{op, cts.aux, 0});
  pump_slots();
}

void ShmChannel::pump_slots() {
  if (!out_segment_ && !slot_sends_.empty() && !closed()) {
    UniqueFd to_pass;
    try {
      out_segment_ = ShmSegment::create(&to_pass);
    } catch (const Error& e) {
      for (auto& s : slot_sends_) finish_send(s.op, Status::failure(e.code(), e.what()));
      slot_sends_.clear();
      return;
    }
    send_memory(MemoryKind::Segment, 0, 0, ShmSegment::kBytes, std::move(to_pass));
  }
  if (out_segment_ && !slot_sends_.empty()) segment_bytes_.store(ShmSegment::kBytes);  // (again) in use
  // Every queued send gets at least one chunk, so an empty message still announces itself.
  while (!slot_sends_.empty() && !free_slots_.empty() && !closed()) {
    SlotSend& s = slot_sends_.front();
    const size_t slot = free_slots_.back();
    free_slots_.pop_back();
    slots_in_use_ |= 1u << slot;
    const size_t chunk = std::min(ShmSegment::kSlotBytes, s.op->len - s.offset);
    if (chunk) std::memcpy(out_segment_->slot(slot), static_cast<const char*>(s.op->buf) + s.offset, chunk);
    FrameHeader h;
    h.type = FrameType::Slot;
    h.tag = s.op->tag;
    h.id = s.receiver_id;
    h.offset = s.offset;
    h.length = chunk;
    h.aux = slot;
    enqueue(h, nullptr, 0);
    ++slot_chunks_;
    s.offset += chunk;
    if (s.offset >= s.op->len) {
      finish_send(s.op, Status::success());  // the user buffer is no longer needed
      slot_sends_.pop_front();
    }
  }
}

size_t ShmChannel::release_idle_memory() {
  // The peer reads a slot only between our Slot frame and its SlotFree: none in use, none read.
  if (!out_segment_ || slots_in_use_ != 0 || !slot_sends_.empty() || segment_bytes_.load() == 0) return 0;
  out_segment_->release_pages();
  return segment_bytes_.exchange(0);
}

void ShmChannel::on_slot(const FrameHeader& h) {
  RecvPtr op = find_rendezvous_recv(h.id);
  if (!op) return protocol_error("slot frame for an unknown receive");
  // In order, within one slot and within the announced length (compared without overflow).
  if (!in_segment_ || h.aux >= ShmSegment::kSlots || h.length > ShmSegment::kSlotBytes || h.offset != op->received ||
      h.length > op->expected - op->received)
    return protocol_error("slot frame out of range");
  if (h.length && !op->discard) {
    const char* from = in_segment_->slot(h.aux);
    if (op->sink) hand_over(op->sink, from, h.offset, h.length);
    else std::memcpy(static_cast<char*>(op->buf) + h.offset, from, h.length);
  }
  op->received += h.length;
  staged_bytes_ += h.length;
  FrameHeader freed;
  freed.type = FrameType::SlotFree;
  freed.aux = h.aux;
  enqueue(freed, nullptr, 0);
  if (op->received == op->expected) {
    erase_rendezvous_recv(h.id);
    finish_recv(op, Status::success(), op->expected);
  }
}

void ShmChannel::on_slot_free(const FrameHeader& h) {
  if (h.aux >= ShmSegment::kSlots || !(slots_in_use_ & (1u << h.aux)))
    return protocol_error("a slot returned that was not in use");
  slots_in_use_ &= ~(1u << h.aux);
  free_slots_.push_back(h.aux);
  pump_slots();
}

bool ShmChannel::handle_extra_frame(const FrameHeader& h) {
  switch (h.type) {
    case FrameType::Fin: {
      SendPtr op = take_rendezvous_send(h.id);
      if (!op) {
        protocol_error("FIN for an unknown send");
        return true;
      }
      finish_send(op, (h.flags & kFrameFailed)
                          ? Status::failure(dcRemoteError, "shm connection to rank " + std::to_string(peer()) +
                                                               ": the receiver could not copy the message")
                          : Status::success());
      return true;
    }
    case FrameType::Slot: on_slot(h); return true;
    case FrameType::RegionGone: drop_import(h.aux); return true;
    case FrameType::SlotFree: on_slot_free(h); return true;
    case FrameType::Memory: on_memory(h); return true;
    default: return false;
  }
}

void ShmChannel::on_closed() {
  for (auto& [id, region] : imports_) munmap(const_cast<char*>(region.local), region.size);
  imports_.clear();
  boards_.clear();
  auto waiters = std::move(board_waiters_);
  board_waiters_.clear();
  for (auto& [key, w] : waiters) w.done(-1);
  for (auto& s : slot_sends_) finish_send(s.op, close_status());
  slot_sends_.clear();
}

}  // namespace dc
