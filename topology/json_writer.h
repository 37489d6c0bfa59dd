// The two pieces of JSON text the topology file writer needs: a quoted string and a number that
// reads back to the same double.
#pragma once

#include <string>
#include <string_view>

namespace dc::topo {

std::string json_string(std::string_view text);
// The shortest text that parses back to exactly this value, without an exponent where that fits
// in 40 characters. Finite values only.
std::string json_number(double value);

}  // namespace dc::topo
