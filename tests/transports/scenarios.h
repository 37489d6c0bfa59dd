// Transport-independent scenarios, run by the tcp and shm tests on two ranks (threads or processes).
#pragma once

#include <string>

#include "tests/transports/two_ranks.h"

namespace dc::test {

// 0 B, 1 B, eager max, eager max + 1 and 64 MiB both ways at once; data and counters checked.
std::string sizes_both_ways(RankContext& ctx);
// Many tags, eager and rendezvous, each rank receives them in reverse order of sending.
std::string reverse_tags(RankContext& ctx);
// Rank 0 sends (more than the eager window) before rank 1 has posted anything.
std::string unexpected_messages(RankContext& ctx);
// Receives shorter than their buffer, and messages longer than their buffer (dcInvalidUsage).
std::string short_and_too_long(RankContext& ctx);
// Rank 0 sends an eager message, flushes and closes its connection before rank 1 posts the receive;
// rank 1 still receives it (a rank may send its last message and exit).
std::string sent_then_closed(RankContext& ctx);
// Rank 1 cancels its receives of one operation (comm, seq), one still posted and one whose large
// message is arriving; rank 0 then sends: the receives end with dcSystemError, nothing is written
// into their buffers once that is reported, and other operations on the connection are unaffected.
std::string cancelled_receives(RankContext& ctx);
// Rank 1 cancels an operation before anything of it arrived; rank 0 then sends it more eager data
// than the window and one rendezvous message: every send ends without error (dropped, credit
// returned; the announcement refused) and the next operation passes.
std::string late_messages_of_cancelled(RankContext& ctx);
// Receives through a piece sink, both ways at once: eager messages land in the buffer and skip
// the sink; rendezvous messages (up to several MiB and odd sizes) reach the sink in order, in
// pieces of at most kPieceBytes that cover the message exactly, and leave the buffer untouched.
std::string pieces_in_order(RankContext& ctx);
// The same receives on a transport that keeps recv_pieces' default (UCX): every message, eager or
// rendezvous, lands wholly in the buffer and the sink is never called.
std::string pieces_by_default(RankContext& ctx);
// Rank 0 SIGKILLs rank 1 (a process) with transfers pending: they fail within a second.
std::string peer_killed(RankContext& ctx);

// connect() to an address nobody serves (dialing side) and to a peer that never dials (accepting
// side) both fail by their deadline.
std::string connect_deadlines(const TransportFactory& factory, const std::string& dead_address);
// A dialer from another session is refused; the acceptor's connect() runs into its deadline.
std::string wrong_session(const TransportFactory& factory);

}  // namespace dc::test
