// Command-line helpers of the tools: sizes with K/M/G suffixes, and JSON string escaping.
#pragma once

#include <cstdint>
#include <string>

namespace dc::tools {

// A positive integer, optionally followed by K, M or G (powers of 1024). Throws dc::Error
// (dcInvalidArgument) naming the flag for anything else, zero, or a value that overflows.
uint64_t parse_size(const std::string& flag, const char* text);

// A count from 1 to limit (parse_size's syntax); larger counts are refused, never wrapped.
int parse_count(const std::string& flag, const char* text, int limit);

// text as the inside of a JSON string.
std::string json_escaped(const std::string& text);

}  // namespace dc::tools
