// A rank's reading of the root's reply (wire.h), apart from the socket so that it can be fuzzed:
// every count and length is checked against its bound before anything is allocated for it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace dc {

// Where the reply's bytes come from. read() fills exactly `len` bytes or throws dc::Error.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual void read(void* dst, size_t len) = 0;
};

struct RootReply {
  enum class Kind { Table, Error, Status } kind = Kind::Error;
  std::vector<std::string> blobs;   // Table: every rank's blob
  dcResult_t code = dcRemoteError;  // Error: what the root reported (a known, failing code)
  std::string text;                 // Error: its message; Status: the progress text
};

// Reads one reply to a join of `nranks` ranks (or to a status query). Throws dc::Error
// (dcRemoteError) for a malformed reply: an unknown kind, a table of another size, a length over
// its bound (wire.h).
RootReply read_root_reply(ByteSource& in, int nranks);

}  // namespace dc
