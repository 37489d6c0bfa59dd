#include "src/core/bootstrap/host_port.h"

#include <boost/asio/io_context.hpp>

#include "base/error.h"

namespace dc {

namespace ip = boost::asio::ip;

ip::tcp::endpoint parse_host_port(const std::string& text, const std::string& what) {
  auto malformed = [&]() { fail(dcInvalidArgument, what + "=" + text + " is not host:port or [ipv6]:port"); };
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') malformed();
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) malformed();
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) < 1 || std::stoi(port) > 65535)
    malformed();

  boost::asio::io_context io;
  ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, port, ip::tcp::resolver::numeric_service, ec);
  if (ec || results.empty())
    fail(dcInvalidArgument,
         what + "=" + text + ": cannot resolve host '" + host + "'" + (ec ? ": " + ec.message() : std::string()));
  for (const auto& entry : results)
    if (entry.endpoint().address().is_v4()) return entry.endpoint();
  return results.begin()->endpoint();
}

}  // namespace dc
