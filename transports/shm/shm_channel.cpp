#include "transports/shm/shm_channel.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/base/log.h"

namespace dc {

ShmChannel::ShmChannel(boost::asio::io_context& io, Socket socket, int peer, pid_t peer_pid,
                       std::shared_ptr<ShmSegment> segment, std::shared_ptr<ShmRegions> regions,
                       std::string peer_address, bool dialer, bool single_copy)
    : MessageChannel(io, std::move(socket), peer, "shm"),
      peer_pid_(peer_pid),
      segment_(std::move(segment)),
      regions_(std::move(regions)),
      peer_address_(std::move(peer_address)),
      out_half_(dialer ? 0 : 1),
      in_half_(dialer ? 1 : 0),
      single_copy_(single_copy) {
  for (size_t i = 0; i < ShmSegment::kSlots; ++i) free_slots_.push_back(i);
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

void ShmChannel::describe_rendezvous(FrameHeader& rts, const void* buf, size_t len) {
  const ExportedRegion* region = regions_->find_export(buf, len);
  if (!region) return;
  if (!regions_passed_.count(region->id)) {
    if (!regions_->send_region(*region, peer_address_)) return;
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

bool ShmChannel::copy_from_region(const RecvPtr& op, const FrameHeader& rts) {
  const ImportedRegion* region = regions_->find_import(peer(), rts.offset);
  if (!region || rts.aux < region->remote_base || rts.aux - region->remote_base > region->size ||
      rts.length > region->size - (rts.aux - region->remote_base)) {
    return false;
  }
  const char* from = region->local + (rts.aux - region->remote_base);
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
    const int err = op->sink ? stream_from_peer(op->sink, rts.aux, rts.length)
                             : copy_from_peer(op->buf, rts.aux, rts.length);
    if (err == 0) {
      ++direct_copies_;
      finish_recv(op, Status::success(), rts.length);
      return send_fin(rts, false);
    }
    if (err != EPERM && err != ENOSYS && err != EACCES) {
      // The peer is gone (ESRCH) or its buffer is not mapped: this message is lost.
      finish_recv(op, Status::failure(err == ESRCH ? dcRemoteError : dcSystemError,
                                      "shm connection to rank " + std::to_string(peer()) +
                                          ": cross-memory read failed: " + std::strerror(err)),
                  0);
      return send_fin(rts, true);
    }
    DC_INFO("shm transport: cross-memory attach to rank %d forbidden (%s); copying through shared memory",
            peer(), std::strerror(err));
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
  // Every queued send gets at least one chunk, so an empty message still announces itself.
  while (!slot_sends_.empty() && !free_slots_.empty() && !closed()) {
    SlotSend& s = slot_sends_.front();
    const size_t slot = free_slots_.back();
    free_slots_.pop_back();
    const size_t chunk = std::min(ShmSegment::kSlotBytes, s.op->len - s.offset);
    if (chunk) std::memcpy(segment_->slot(out_half_, slot), static_cast<const char*>(s.op->buf) + s.offset, chunk);
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

bool ShmChannel::on_slot(const FrameHeader& h) {
  RecvPtr op = find_rendezvous_recv(h.id);
  if (!op || h.aux >= ShmSegment::kSlots || h.length > ShmSegment::kSlotBytes ||
      h.offset + h.length > op->expected) {
    return false;
  }
  if (h.length && !op->discard) {
    const char* from = segment_->slot(in_half_, h.aux);
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
  return true;
}

bool ShmChannel::handle_extra_frame(const FrameHeader& h) {
  switch (h.type) {
    case FrameType::Fin: {
      SendPtr op = take_rendezvous_send(h.id);
      if (!op) return false;
      finish_send(op, (h.flags & kFrameFailed)
                          ? Status::failure(dcRemoteError, "shm connection to rank " +
                                                               std::to_string(peer()) +
                                                               ": the receiver could not copy the message")
                          : Status::success());
      return true;
    }
    case FrameType::Slot:
      return on_slot(h);
    case FrameType::RegionGone:
      regions_->drop_import(peer(), h.aux);
      return true;
    case FrameType::SlotFree:
      if (h.aux >= ShmSegment::kSlots) return false;
      free_slots_.push_back(h.aux);
      pump_slots();
      return true;
    default:
      return false;
  }
}

void ShmChannel::on_closed() {
  regions_->drop_imports_of(peer());
  for (auto& s : slot_sends_) finish_send(s.op, close_status());
  slot_sends_.clear();
}

}  // namespace dc
