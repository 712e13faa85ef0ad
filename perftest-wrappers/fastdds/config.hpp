// The Fast DDS agent's transport and discovery configuration (see README.md, "Transport").
#pragma once

#include <string>

#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/rtps/common/Locator.h>

#include "options.h"
#include "perftest_qos.h"

namespace perftest {

struct AgentConfig {
  eprosima::fastdds::dds::DomainParticipantQos participant;
  std::string nic_ip;   // the one interface address (empty: every interface)
  std::string xml;      // the agent's choices written as a Fast DDS XML profile
  // -multicast: the groups of the Throughput, Latency and Announcement readers
  eprosima::fastrtps::rtps::Locator_t groups[3];
  int writer_max_samples = 50;  // the Throughput writer's window (pt_window_samples)
  eprosima::fastrtps::Duration_t heartbeat_period;  // the user writers' heartbeat period
};

// Heartbeat period (s) of the agent's writers: Perftest's 10 ms, and with -scaleSettings in
// a large test the native agent's P^2 / 7500 s, 1 to 3 s (its README, "-scaleSettings").
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
