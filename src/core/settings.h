// The settings src/core reads (base/config_table.h): the communicator's (config.cpp) and the
// bootstrap's. docs/configuration.md documents them; plan-shaping ones are listed by
// Config::plan_shaping_entries.
#pragma once

#include "base/config_table.h"

namespace dc::settings {

using config::OnBad;
using config::Setting;
using config::Type;

// Words in TransportChoice's order (config.h), so a choice's index is its enumerator.
inline constexpr Setting kTransport{.name = "DEEPCOMM_TRANSPORT",
                                    .type = Type::Choice,
                                    .default_text = "auto",
                                    .choices = "auto|shm|tcp|ucx|ucx-all",
                                    .doc = "Which transports connect the ranks."};
inline constexpr Setting kAlgo{.name = "DEEPCOMM_ALGO",
                               .default_text = "auto",
                               .doc = "Which algorithms the selector may choose (algorithm_filter.h)."};
inline constexpr Setting kNcclAlgo{.name = "NCCL_ALGO",
                                   .doc = "NCCL's algorithm filter, read when DEEPCOMM_ALGO is unset."};
inline constexpr Setting kChunkBytes{.name = "DEEPCOMM_CHUNK_BYTES",
                                     .type = Type::Integer,
                                     .default_text = "1048576",
                                     .min = 64,
                                     .max = int64_t{1} << 30,
                                     .doc = "Pipelining unit of ring and chain plans, in bytes."};
inline constexpr Setting kTreeThreshold{.name = "DEEPCOMM_TREE_THRESHOLD",
                                        .type = Type::Integer,
                                        .default_text = "0",
                                        .min = 0,
                                        .max = int64_t{1} << 40,
                                        .doc = "All-reduces below this many bytes use the tree; 0: the model decides."};
inline constexpr Setting kFlatBytes{.name = "DEEPCOMM_FLAT_BYTES",
                                    .type = Type::Integer,
                                    .default_text = "1048576",
                                    .min = 0,
                                    .max = int64_t{16} << 20,
                                    .doc = "Largest board data a one-host collective runs on the flat board; 0: off."};
inline constexpr Setting kCompress{
    .name = "DEEPCOMM_COMPRESS", .default_text = "off", .doc = "Compression spec of large float all-reduces, or off."};
inline constexpr Setting kCompressMinBytes{.name = "DEEPCOMM_COMPRESS_MIN_BYTES",
                                           .type = Type::Integer,
                                           .default_text = "1048576",
                                           .min = 0,
                                           .max = int64_t{1} << 50,
                                           .doc = "The smallest all-reduce DEEPCOMM_COMPRESS compresses, in bytes."};
inline constexpr Setting kCompressEfBytes{.name = "DEEPCOMM_COMPRESS_EF_BYTES",
                                          .type = Type::Integer,
                                          .default_text = "4294967296",
                                          .min = 0,
                                          .max = int64_t{1} << 50,
                                          .doc = "Memory cap of a communicator's error-feedback store, in bytes."};
inline constexpr Setting kCompressReset{.name = "DEEPCOMM_COMPRESS_RESET",
                                        .doc = "A change of its value empties the error-feedback store."};
inline constexpr Setting kTimeout{.name = "DEEPCOMM_TIMEOUT",
                                  .type = Type::Integer,
                                  .default_text = "300",
                                  .min = 1,
                                  .max = 2000000,
                                  .doc = "Progress deadline of a blocking call, in seconds."};
inline constexpr Setting kConnectTimeout{.name = "DEEPCOMM_CONNECT_TIMEOUT",
                                         .type = Type::Integer,
                                         .default_text = "60",
                                         .min = 1,
                                         .max = 2000000,
                                         .doc = "Deadline for connecting to every peer at init, in seconds."};
inline constexpr Setting kBootstrapTimeout{.name = "DEEPCOMM_BOOTSTRAP_TIMEOUT",
                                           .type = Type::Integer,
                                           .default_text = "120000",
                                           .min = 1,
                                           .max = 2000000000,
                                           .doc = "How long the rendezvous root serves and ranks wait to join, in ms."};
inline constexpr Setting kHostId{.name = "DEEPCOMM_HOST_ID",
                                 .default_text = "boot id + netns inode",
                                 .doc = "Host identity: which peers count as on the same host."};
inline constexpr Setting kTopoDumpFile{.name = "DEEPCOMM_TOPO_DUMP_FILE",
                                       .doc = "Rank 0 writes the detected cluster there as a topology file."};

// Bootstrap: where ranks meet and how they authenticate.
inline constexpr Setting kCommId{.name = "NCCL_COMM_ID", .doc = "The rendezvous address host:port."};
inline constexpr Setting kSecret{.name = "DEEPCOMM_SECRET",
                                 .doc = "Secret of ids derived from the environment: text, or /path of a file.",
                                 .secret = true};
// Set by deepcomm-run for dcCommInitFromEnv.
inline constexpr Setting kRank{.name = "DEEPCOMM_RANK",
                               .type = Type::Integer,
                               .computed_default = true,
                               .min = 0,
                               .max = (int64_t{1} << 24) - 1,
                               .doc = "This process's rank (below DEEPCOMM_NRANKS)."};
inline constexpr Setting kNranks{.name = "DEEPCOMM_NRANKS",
                                 .type = Type::Integer,
                                 .computed_default = true,
                                 .min = 1,
                                 .max = int64_t{1} << 24,
                                 .doc = "The number of ranks."};
inline constexpr Setting kUniqueId{.name = "DEEPCOMM_UNIQUE_ID", .doc = "The unique id, as hex.", .secret = true};

inline constexpr const Setting* kCoreTable[] = {&kTransport,        &kAlgo,          &kNcclAlgo,     &kChunkBytes,
                                                &kTreeThreshold,    &kFlatBytes,     &kCompress,     &kCompressMinBytes,
                                                &kCompressEfBytes,  &kCompressReset, &kTimeout,      &kConnectTimeout,
                                                &kBootstrapTimeout, &kHostId,        &kTopoDumpFile, &kCommId,
                                                &kSecret,           &kRank,          &kNranks,       &kUniqueId};

}  // namespace dc::settings
