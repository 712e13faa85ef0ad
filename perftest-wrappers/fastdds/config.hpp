// The Fast DDS agent's transport and discovery configuration (see README.md, "Transport").
#pragma once

#include <string>

#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/rtps/common/Locator.h>

#include "options.h"

namespace perftest {

struct AgentConfig {
  eprosima::fastdds::dds::DomainParticipantQos participant;
  std::string nic_ip;   // the one interface address (empty: every interface)
  std::string xml;      // the agent's choices written as a Fast DDS XML profile
  // -multicast: the groups of the Throughput, Latency and Announcement readers
  eprosima::fastrtps::rtps::Locator_t groups[3];
  int writer_max_samples = 1000;  // the reliable writers' window (window_samples)
  eprosima::fastrtps::Duration_t heartbeat_period;  // the user writers' heartbeat period
};

// Socket receive buffer requested for the UDPv4 transport (bytes).
constexpr uint32_t RECEIVE_BUFFER = 1 << 20;
// The reliable writers' window in samples (KEEP_ALL max_samples), unless -sendQueueSize:
// a subscriber's socket buffer must hold a full window of every publisher (Fast DDS sends
// one datagram per sample, ~1 KiB of buffer each), so RECEIVE_BUFFER / (1 KiB x
// publishers), between 16 and 1000 samples. Measured (README): a 10 x 10 test with 1000
// collapsed (publishers stalled after their first window, 13 processes exited 1), with
// 100 every process exited 0.
int window_samples(const pt_options_t &o);

// Heartbeat period (s) of the agent's writers: 0.1 s (Cyclone's HeartbeatInterval, the
// native agent's default), and in large tests the native agent's P^2 / 7500 s, 1 to 3 s.
double heartbeat_period_s(const pt_options_t &o);

// Fills cfg from the options; on an impossible setting (an -nic that names no interface of
// this host) returns false with a message in err.
bool build_config(const pt_options_t &o, const char *name, AgentConfig &cfg, std::string &err);

// The participant's effective QoS (as read back from Fast DDS after it was created):
// transports, locators, discovery.
std::string describe_participant(const eprosima::fastdds::dds::DomainParticipantQos &q);

// One-line description of the transport and discovery choice.
const char *mode_description(const pt_options_t &o);

// The SPDP announcement period (s) the agent gives Fast DDS: -spdpInterval, else Fast DDS's
// 3 s, shortened to 30% of a shorter -leaseDuration so a lease never expires between
// two announcements.
double announcement_period_s(const pt_options_t &o);

}  // namespace perftest
