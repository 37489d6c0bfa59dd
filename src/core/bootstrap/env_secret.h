// The secret of ids that ranks derive from their environment (NCCL_COMM_ID, torchrun) instead of
// receiving from the process that made them: such ids cannot carry a random secret, so it comes
// from DEEPCOMM_SECRET, the same text on every rank (or, when it starts with '/', the file it
// names). Without it the communicator is unauthenticated: anyone who can reach the rendezvous
// address can join (logged once at INFO).
#pragma once

#include <string>

#include "src/core/bootstrap/unique_id_layout.h"

namespace dc {

// The session from `session_text` and the secret from DEEPCOMM_SECRET. `what` names the id's
// source for the log line. Throws dc::Error(dcInvalidUsage) for an unusable DEEPCOMM_SECRET.
IdCredentials credentials_from_environment(const std::string& session_text, const char* what);

// Bytes of the secret a text stands for (SHA-256 of it, cut to 128 bits); at least 16 characters.
Secret secret_from_text(const std::string& text);

}  // namespace dc
