// A TCP port for a test to hand to code that binds it later (NCCL_COMM_ID, MASTER_PORT).
#pragma once

namespace dc::test {

// A loopback port that no other test process can be handed while this process lives, and that the
// kernel never picks on its own: it lies below the ephemeral range, so neither bind(port 0) nor the
// source port of an outgoing connection can take it between this call and the later bind. Ports are
// claimed with a lock file under /tmp (flock, released when the process and its children exit).
// Throws std::runtime_error when none is free.
int reserved_port();

// The first port of the kernel's ephemeral range (net.ipv4.ip_local_port_range).
int ephemeral_range_start();

}  // namespace dc::test
