// Which algorithms the environment lets the selector consider, per collective: DEEPCOMM_ALGO in
// DeepComm's names, NCCL_ALGO in NCCL's own syntax. Both read "[coll:][^]name[,name...]" entries
// separated by ';' — a list keeps only the names, '^' keeps everything but them, a "coll:" prefix
// (allreduce, allgather, reducescatter, broadcast, reduce, alltoall, gather, scatter) limits an
// entry to one collective; names and collectives in any case. A filter that leaves a collective
// no applicable algorithm is ignored for it (NCCL_ALGO=Tree does not stop an all-gather).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace dc {

class AlgorithmFilter {
 public:
  // DeepComm's names (ring, tree, dbtree, direct, hierarchical, pipeline, pairwise; "auto" = no
  // filter).
  // An unknown name throws dc::Error(dcInvalidArgument) naming it.
  static AlgorithmFilter parse_deepcomm(const std::string& text);
  // NCCL's names: Ring (ring, and the chain of broadcast and reduce), Tree (tree and NCCL's own
  // double binary tree, dbtree). Names DeepComm
  // lacks (NVLS, NVLSTree, CollnetDirect, CollnetChain, PAT) and unknown names are ignored; each
  // ignored name adds a line to *warnings. Never throws for a name.
  static AlgorithmFilter parse_nccl(const std::string& text, std::vector<std::string>* warnings);
  // Only `algorithm`, for every collective.
  static AlgorithmFilter only(const std::string& algorithm);

  bool empty() const { return rules_.empty(); }
  bool allows(dcCollective_t collective, const std::string& algorithm) const;
  // A normal form: equal filters print alike (plan-shaping agreement, plan cache keys).
  std::string canonical() const;

 private:
  struct Rule {
    int collective = -1;  // -1: every collective
    bool exclude = false;
    std::set<std::string> names;
  };
  std::vector<Rule> rules_;
};

// The collective a "coll:" prefix names (allreduce, allgather, reducescatter, broadcast, reduce,
// alltoall, gather, scatter; lower case), or -1.
int collective_by_name(const std::string& name);

// DeepComm's algorithm names, in the registry's order.
const std::vector<std::string>& algorithm_names();

}  // namespace dc
