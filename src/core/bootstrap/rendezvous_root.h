// A rendezvous root: a TCP server on its own thread and io_context (not the progress engine) that
// collects every rank's join and answers each with the full table, or with an error when the joins
// disagree or the deadline passes. It holds no rank state. A connection is read from only after it
// proved the unique id's secret (handshake.h); connections still proving it are bounded in number
// and time (handshake_slots.h), and a proven one's blob in size (wire.h). The process hosting a
// root usually forks its ranks: the root's thread is parked across every fork (fork_park.h).
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/handshake_slots.h"
#include "src/core/bootstrap/rendezvous_state.h"
#include "src/core/bootstrap/unique_id_layout.h"

namespace dc {

class RendezvousRoot {
 public:
  // Listens on bind_to (port 0: an ephemeral port). Throws dc::Error(dcSystemError) when it cannot.
  // fail_on_departure: a joined rank whose connection ends before every rank joined fails the
  // rendezvous at once (a grow's root: its joiner is a fresh process that may die); otherwise the
  // others wait for the deadline (ranks giving up at their own deadlines leave one by one).
  RendezvousRoot(const boost::asio::ip::tcp::endpoint& bind_to, bool reuse_address, const IdCredentials& credentials,
                 std::chrono::milliseconds deadline, bool fail_on_departure = false);
  ~RendezvousRoot();  // stops serving and joins the thread
  RendezvousRoot(const RendezvousRoot&) = delete;
  RendezvousRoot& operator=(const RendezvousRoot&) = delete;

  void start();
  boost::asio::ip::tcp::endpoint local_endpoint() const { return endpoint_; }
  // The listening socket, or -1 once the root has begun closing it.
  int listen_fd() const { return listen_fd_.load(); }
  bool finished() const { return finished_.load(); }

 private:
  struct Connection;
  using ConnectionPtr = std::shared_ptr<Connection>;

  void accept_next();
  void authenticate(const ConnectionPtr& c);
  void read_request(const ConnectionPtr& c);
  void on_request(const ConnectionPtr& c);
  void on_join(const ConnectionPtr& c);
  void watch_departure(const ConnectionPtr& c);
  void send_table();
  void fail_everyone();
  void on_deadline();
  void send(const ConnectionPtr& c, std::shared_ptr<const std::string> head,
            std::shared_ptr<const std::vector<std::string>> blobs = nullptr);
  void stop_when_sent();
  void close_acceptor();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer deadline_timer_;
  boost::asio::ip::tcp::endpoint endpoint_;
  std::atomic<int> listen_fd_{-1};
  std::chrono::milliseconds deadline_;
  bool fail_on_departure_;
  IdCredentials credentials_;
  HandshakeSlots unproven_;  // connections that have not proved the secret yet
  RendezvousState state_;
  std::vector<ConnectionPtr> waiting_;  // joined, waiting for the table
  struct TableReply {
    ConnectionPtr connection;
    std::shared_ptr<const std::string> head;
    std::shared_ptr<const std::vector<std::string>> blobs;
  };
  std::optional<TableReply> told_last_;  // rank 0's table, sent once the others' writes are done
  int writes_in_flight_ = 0;
  bool closing_ = false;  // table sent or deadline passed: stop once the writes are out
  std::thread thread_;
  std::atomic<bool> finished_{false};
  std::mutex exit_mutex_;  // the thread, done, waits for the destructor's may_exit_
  std::condition_variable exit_cv_;
  bool may_exit_ = false;
};

}  // namespace dc
