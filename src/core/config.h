// A communicator's configuration: the settings (declared in src/core/settings.h and the rooms'
// tables below it, read through base/config_table.h) that shape it, read once per communicator
// init. Entries marked plan-shaping are exchanged at init and must agree on all ranks; see
// docs/configuration.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compression/form/spec.h"
#include "src/plan/algorithm_filter.h"
#include "topology/topology_file.h"

namespace dc {

// Ucx: UCX between hosts, shared memory inside one; UcxAll: UCX everywhere.
enum class TransportChoice { Auto, Shm, Tcp, Ucx, UcxAll };

struct Config {
  AlgorithmFilter algorithms;                         // DEEPCOMM_ALGO, else NCCL_ALGO (algorithm_filter.h)
  TransportChoice transport = TransportChoice::Auto;  // DEEPCOMM_TRANSPORT=auto|shm|tcp|ucx|ucx-all
  uint64_t chunk_bytes = 1 << 20;                     // DEEPCOMM_CHUNK_BYTES
  uint64_t tree_threshold_bytes = 0;                  // DEEPCOMM_TREE_THRESHOLD (0: cost model decides)
  uint64_t flat_bytes = 1 << 20;                      // DEEPCOMM_FLAT_BYTES (0: no flat board)
  int timeout_ms = 300000;                            // DEEPCOMM_TIMEOUT (seconds in the environment)
  int connect_timeout_ms = 60000;                     // DEEPCOMM_CONNECT_TIMEOUT (seconds)
  int bootstrap_timeout_ms = 120000;                  // DEEPCOMM_BOOTSTRAP_TIMEOUT (ms, read by bootstrap)
  bool blocking = true;                               // dcConfig_t.blocking (not from the environment)
  int rma_contexts = 1;                               // dcConfig_t.rmaContexts (not from the environment)
  // DEEPCOMM_COMPRESS: all-reduces of float32/16, bfloat16 with sum or avg of at least
  // DEEPCOMM_COMPRESS_MIN_BYTES run compressed with this spec (unset, "" or "off": never).
  std::optional<compression::Spec> compress;
  uint64_t compress_min_bytes = 1 << 20;    // DEEPCOMM_COMPRESS_MIN_BYTES
  uint64_t compress_ef_bytes = 4ull << 30;  // DEEPCOMM_COMPRESS_EF_BYTES: the NCCL path's residuals
  // DEEPCOMM_TOPO_FILE, loaded (null when unset); its digest is plan-shaping.
  std::shared_ptr<const topo::TopologyFile> topology_file;
  std::string topology_dump_path;  // DEEPCOMM_TOPO_DUMP_FILE: rank 0 writes the cluster there

  // Reads the environment; throws dc::Error(dcInvalidArgument) naming a variable with a bad value.
  static Config from_environment();

  // "NAME=value" for every plan-shaping entry, in a fixed order.
  std::vector<std::string> plan_shaping_entries() const;
};

// Adds every room's settings table (base/config_table.h) to the process's registry, once; the
// registry's users call it first. Explicit, so that no table depends on static initialization
// or on its reading code being linked in.
void register_settings();

// Host identity: where shared memory really works. Boot id + network-namespace inode, or
// DEEPCOMM_HOST_ID when set.
std::string host_identity();

}  // namespace dc
