#include <string>

#include "base/error.h"
#include "base/net_interface.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/env_secret.h"
#include "src/core/bootstrap/host_port.h"
#include "src/core/bootstrap/root_registry.h"
#include "src/core/bootstrap/unique_id_layout.h"
#include "src/core/settings.h"

namespace dc {

namespace {

// DEEPCOMM_BOOTSTRAP_TIMEOUT (ms): how long a root serves before giving up on missing ranks.
std::chrono::milliseconds root_deadline() {
  return std::chrono::milliseconds(config::integer(settings::kBootstrapTimeout));
}

}  // namespace

void make_unique_id(dcUniqueId* id) {
  if (!id) fail(dcInvalidArgument, "unique id pointer is NULL");
  // As NCCL: every process may build this id on its own, so its session comes from the address
  // and its secret from DEEPCOMM_SECRET.
  if (auto comm_id = config::text(settings::kCommId)) {
    RootAddress root{parse_host_port(*comm_id, "NCCL_COMM_ID"), true};
    *id = encode_unique_id(root, credentials_from_environment("NCCL_COMM_ID=" + *comm_id, "NCCL_COMM_ID"));
    return;
  }
  const IdCredentials credentials = random_credentials();
  boost::asio::ip::tcp::endpoint bind_to(boost::asio::ip::make_address(chosen_interface().address), 0);
  RootAddress root{start_rendezvous_root(bind_to, false, credentials, root_deadline()), false};
  *id = encode_unique_id(root, credentials);
}

}  // namespace dc
