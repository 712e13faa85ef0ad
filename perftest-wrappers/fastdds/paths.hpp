// Which path carried the user data a participant received: Fast DDS's shared-memory
// transport, UDP from this host (unicast over lo, or multicast the kernel looped back) or
// UDP from another host (the emulated network). Each transport the agent registers is
// wrapped in a counting ChainingTransport that reads, in every RTPS message it hands up,
// the DATA submessages (and first DATA_FRAG fragments) of user writers (rtps_count.hpp);
// the message then goes on unchanged. A sample carried on two paths is counted on both.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <fastdds/rtps/transport/TransportDescriptorInterface.h>

namespace perftest {

struct PathCounts {
  uint64_t shm = 0;            // DATA through shared memory
  uint64_t udp_this_host = 0;  // DATA over UDP whose source address is this host's
  uint64_t udp_other_hosts = 0;
};

// Counts so far (thread-safe).
PathCounts path_counts();

// A descriptor of the same kind (a SharedMemTransportDescriptor stays one, so Fast DDS
// still knows it has shared memory) whose transport counts what it receives. host_ip: the
// address that makes a UDP source "this host" (empty: none).
std::shared_ptr<eprosima::fastdds::rtps::TransportDescriptorInterface> counting_shm();
std::shared_ptr<eprosima::fastdds::rtps::TransportDescriptorInterface> counting_udp(
    const std::shared_ptr<eprosima::fastdds::rtps::TransportDescriptorInterface> &udp,
    const std::string &host_ip);

}  // namespace perftest
