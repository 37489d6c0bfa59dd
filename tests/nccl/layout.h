// The facts of the NCCL ABI that nccl_abi_test compares, as (expression, value) pairs collected
// from DeepComm's header and from NVIDIA's in two separate translation units.
#pragma once

#include <string>
#include <utility>
#include <vector>

using LayoutEntries = std::vector<std::pair<std::string, std::string>>;

LayoutEntries our_layout();     // our_layout.cpp
LayoutEntries vendor_layout();  // vendor_layout.cpp, when NVIDIA's header exists
