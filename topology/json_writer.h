// The two pieces of JSON text the topology file writer needs: a quoted string and a number that
// reads back to the same double.
#pragma once

#include <string>
#include <string_view>

namespace dc::topo {

std::string json_string(std::string_view text);
std::string json_number(double value);  // shortest form that parses back exactly; finite values only

}  // namespace dc::topo
