// Transport and discovery of the Fast DDS agent. Transports follow Perftest's -transport:
// absent, Perftest's default (its XML profile's UDPv4|SHMEM: Fast DDS's shared-memory
// transport, then UDPv4, as Fast DDS's own builtin transports); UDPv4 alone; or SHMEM alone.
// Fast DDS 2.9 uses shared memory only with participants whose host id equals its own, a
// 16-bit hash of the IPv4 addresses of the interfaces (utils/Host.hpp, SHMLocator.hpp,
// ProxyDataFilters.hpp), so emulated hosts with different addresses never take it between
// them; the testbed also gives each emulated host its own /dev/shm (topologies/net.py), so
// a hash collision could not carry samples around the emulated network either
// (tests/agents/test_agent_netns.py, the shared-memory bypass test, for every -transport).
// Data sharing (another /dev/shm path) stays off on every endpoint (main.cpp).
#include "config.hpp"
#include "paths.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using eprosima::fastrtps::rtps::LocatorList_t;

namespace perftest {
namespace {

// The IPv4 address of interface `name`, or checks that `addr` is one of this host's.
bool resolve_nic(const pt_options_t &o, std::string &ip, std::string &err)
{
  struct ifaddrs *ifs = nullptr;
  if (getifaddrs(&ifs) != 0) {
    err = "cannot list the network interfaces";
    return false;
  }
  bool found = false;
  for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN];
    const auto *sin = reinterpret_cast<const struct sockaddr_in *>(i->ifa_addr);
    inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
    if (o.nic_is_name ? std::strcmp(i->ifa_name, o.nic) == 0 : std::strcmp(buf, o.nic) == 0) {
      ip = buf;
      found = true;
    }
  }
  freeifaddrs(ifs);
  if (!found)
    err = std::string("-nic ") + o.nic + ": no interface of this host has " +
          (o.nic_is_name ? "that name (with an IPv4 address)" : "that IPv4 address");
  return found;
}

Locator_t udp_locator(const char *addr, uint32_t port)
{
  Locator_t l;
  l.kind = LOCATOR_KIND_UDPv4;
  IPLocator::setIPv4(l, std::string(addr));
  l.port = port;
  return l;
}

std::string locators(const LocatorList_t &list)
{
  std::ostringstream s;
  bool first = true;
  for (const Locator_t &l : list) {
    s << (first ? "" : " ") << IPLocator::toIPv4string(l) << ":" << l.port;
    first = false;
  }
  return first ? "(none)" : s.str();
}

}  // namespace

const char *mode_description(const pt_options_t &o)
{
  if (o.npeers > 0)
    return o.multicast ? "data: multicast groups; discovery: unicast peers list (+ multicast SPDP)"
                       : "data: unicast; discovery: unicast peers list (no multicast at all)";
  return o.multicast ? "data: multicast groups; discovery: multicast SPDP, unicast SEDP"
                     : "data: unicast; discovery: multicast SPDP only";
}

double heartbeat_period_s(const pt_options_t &o)
{
  if (!(o.scale_settings && pt_large_test(&o))) return PT_HEARTBEAT_PERIOD_S;
  double p = static_cast<double>(o.est_participants);
  double hb = p * p / 7500.0;
  return hb < 1.0 ? 1.0 : hb > 3.0 ? 3.0 : hb;
}

double announcement_period_s(const pt_options_t &o)
{
  if (o.spdp_interval > 0) return o.spdp_interval;
  double p = 3.0;  // Fast DDS's default leaseDuration_announcementperiod
  return o.lease_duration * 0.3 < p ? o.lease_duration * 0.3 : p;
}

bool build_config(const pt_options_t &o, const char *name, AgentConfig &cfg, std::string &err)
{
  auto &q = cfg.participant;
  q.name(name);
  if (o.nic[0] && !resolve_nic(o, cfg.nic_ip, err)) return false;

  // Shared memory first, as Fast DDS's builtin transports (the first transport that selects
  // a reader's locator carries it); UDPv4 unless -transport SHMEM.
  const bool use_shm = o.transport != PT_TRANSPORT_UDPV4;
  const bool use_udp = o.transport != PT_TRANSPORT_SHMEM;
  if (!use_udp && (o.npeers > 0 || o.multicast)) {
    err = std::string("-transport SHMEM cannot carry ") + (o.multicast ? "-multicast" : "-peer") +
          ": shared memory reaches only this host's participants, by no address or group";
    return false;
  }
  auto udp = std::make_shared<UDPv4TransportDescriptor>();
  udp->TTL = 32;  // routed domains: multicast crosses routers
  if (!cfg.nic_ip.empty()) udp->interfaceWhiteList.push_back(cfg.nic_ip);
  udp->receiveBufferSize = static_cast<uint32_t>(pt_recv_socket_buffer(&o));  // Perftest's (or -receiveBufferSize)
  udp->sendBufferSize = PT_SEND_SOCKET_BUFFER;
  if (o.npeers > 0) udp->maxInitialPeersRange = static_cast<uint32_t>(o.max_participant_index) + 1;
  q.transport().use_builtin_transports = false;
  q.transport().user_transports.clear();
  // Both counted by path (paths.hpp): what each carried is printed at exit.
  if (use_shm) q.transport().user_transports.push_back(counting_shm());
  if (use_udp) q.transport().user_transports.push_back(counting_udp(udp, cfg.nic_ip));

  auto &b = q.wire_protocol().builtin;
  b.discovery_config.leaseDuration = eprosima::fastrtps::Duration_t(static_cast<long double>(o.lease_duration));
  b.discovery_config.leaseDuration_announcementperiod =
      eprosima::fastrtps::Duration_t(static_cast<long double>(announcement_period_s(o)));
  uint32_t domain_port = q.wire_protocol().port.portBase +
                         q.wire_protocol().port.domainIDGain * static_cast<uint32_t>(o.domain);
  if (o.npeers > 0) {
    for (int i = 0; i < o.npeers; i++) {
      struct in_addr a;
      if (inet_pton(AF_INET, o.peers[i], &a) != 1) {
        err = std::string("-peer ") + o.peers[i] + ": not an IPv4 address (Fast DDS peers are addresses)";
        return false;
      }
      b.initialPeersList.push_back(udp_locator(o.peers[i], 0));  // port 0: every index probed
    }
    if (!o.multicast) {
      // Fully unicast discovery: an explicit metatraffic unicast locator (port 0: the
      // participant's well-known port) leaves the metatraffic multicast list empty, so
      // Fast DDS neither sends to nor listens on the SPDP group.
      Locator_t l = udp_locator(cfg.nic_ip.empty() ? "0.0.0.0" : cfg.nic_ip.c_str(), 0);
      b.metatrafficUnicastLocatorList.push_back(l);
    }
  }
  if (o.multicast) {
    // Per-topic groups, each on its own port: the domain's user-multicast port
    // (PB + DG * domain + d2) for Throughput, +2 and +4 for Latency and Announcement (still
    // below the first participant's unicast ports, PB + DG * domain + 10). With one port for
    // all three, Fast DDS 2.9 joined only the group of the first reader created on it:
    // publisher 0 never received the echoes sent to the Latency group (captured: the same
    // echo repaired again and again, never acknowledged).
    uint32_t port = domain_port + q.wire_protocol().port.offsetd2;
    for (int i = 0; i < 3; i++)
      cfg.groups[i] = udp_locator(o.mcast_addr[i], port + 2 * static_cast<uint32_t>(i));
  }
  cfg.writer_max_samples = static_cast<int>(pt_window_samples(&o));
  cfg.heartbeat_period = eprosima::fastrtps::Duration_t(static_cast<long double>(heartbeat_period_s(o)));

  // The same choices, written as a Fast DDS XML profile for the reader of the logs.
  std::ostringstream x;
  x << "<profiles><transport_descriptors>";
  if (use_shm) x << "<transport_descriptor><transport_id>shm</transport_id><type>SHM</type></transport_descriptor>";
  if (use_udp) {
    x << "<transport_descriptor><transport_id>udp</transport_id>"
      << "<type>UDPv4</type><TTL>32</TTL><receiveBufferSize>" << pt_recv_socket_buffer(&o) << "</receiveBufferSize>"
      << "<sendBufferSize>" << PT_SEND_SOCKET_BUFFER << "</sendBufferSize>";
    if (!cfg.nic_ip.empty())
      x << "<interfaceWhiteList><address>" << cfg.nic_ip << "</address>"
        << (o.nic_is_name ? std::string("<!-- -nic ") + o.nic + " -->" : std::string())
        << "</interfaceWhiteList>";
    if (o.npeers > 0) x << "<maxInitialPeersRange>" << udp->maxInitialPeersRange << "</maxInitialPeersRange>";
    x << "</transport_descriptor>";
  }
  x << "</transport_descriptors><participant profile_name=\"perftest\"><rtps>"
    << "<userTransports>" << (use_shm ? "<transport_id>shm</transport_id>" : "")
    << (use_udp ? "<transport_id>udp</transport_id>" : "") << "</userTransports>"
    << "<useBuiltinTransports>false</useBuiltinTransports><builtin><discovery_config>"
    << "<leaseDuration><sec>" << o.lease_duration << "</sec></leaseDuration>"
    << "<leaseAnnouncement><sec>" << announcement_period_s(o) << "</sec></leaseAnnouncement>"
    << "</discovery_config>";
  if (o.npeers > 0) {
    if (!o.multicast)
      x << "<metatrafficUnicastLocatorList><locator><udpv4><address>"
        << (cfg.nic_ip.empty() ? "0.0.0.0" : cfg.nic_ip) << "</address></udpv4></locator>"
        << "</metatrafficUnicastLocatorList>";
    x << "<initialPeersList>";
    for (int i = 0; i < o.npeers; i++)
      x << "<locator><udpv4><address>" << o.peers[i] << "</address></udpv4></locator>";
    x << "</initialPeersList>";
  }
  x << "</builtin></rtps></participant>";
  static const char *topics[3] = {"Throughput", "Latency", "Announcement"};
  for (int i = 0; i < 3; i++) {
    x << "<data_reader profile_name=\"" << topics[i] << "\"><qos><data_sharing><kind>OFF</kind>"
      << "</data_sharing></qos>";
    if (i == 0)  // Perftest's ThroughputQos reader
      x << "<times><heartbeatResponseDelay><nanosec>0</nanosec></heartbeatResponseDelay></times>"
        << "<resourceLimitsQos><max_samples>" << PT_READER_MAX_SAMPLES << "</max_samples>"
        << "<allocated_samples>" << PT_READER_INITIAL_SAMPLES << "</allocated_samples>"
        << "<max_samples_per_instance>" << PT_READER_MAX_SAMPLES << "</max_samples_per_instance>"
        << "</resourceLimitsQos>";
    if (o.multicast)
      x << "<multicastLocatorList><locator><udpv4><address>" << o.mcast_addr[i]
        << "</address><port>" << cfg.groups[i].port << "</port></udpv4></locator>"
        << "</multicastLocatorList>";
    x << "</data_reader>";
  }
  x << "<data_writer profile_name=\"all\"><qos><data_sharing><kind>OFF</kind></data_sharing>"
    << "<reliability><kind>" << (o.best_effort ? "BEST_EFFORT" : "RELIABLE") << "</kind></reliability>"
    << "<history><kind>" << (o.best_effort ? "KEEP_LAST" : "KEEP_ALL") << "</kind></history>"
    << "<publishMode><kind>SYNCHRONOUS</kind></publishMode></qos><times><heartbeatPeriod><nanosec>"
    << static_cast<long long>(heartbeat_period_s(o) * 1e9) << "</nanosec></heartbeatPeriod>"
    << "<nackResponseDelay><nanosec>0</nanosec></nackResponseDelay></times>"
    << "<resourceLimitsQos><max_samples>" << cfg.writer_max_samples << "</max_samples>"
    << "<max_samples_per_instance>" << cfg.writer_max_samples << "</max_samples_per_instance>"
    << "</resourceLimitsQos></data_writer></profiles>";
  cfg.xml = x.str();
  return true;
}

std::string describe_participant(const eprosima::fastdds::dds::DomainParticipantQos &q)
{
  std::ostringstream s;
  s << "use_builtin_transports=" << (q.transport().use_builtin_transports ? "true" : "false")
    << " transports=[";
  bool first = true;
  for (const auto &t : q.transport().user_transports) {
    s << (first ? "" : ", ");
    first = false;
    if (auto u = std::dynamic_pointer_cast<UDPv4TransportDescriptor>(t)) {
      s << "UDPv4(TTL=" << static_cast<int>(u->TTL) << " maxMessageSize=" << u->maxMessageSize
        << " interfaceWhiteList=";
      for (size_t i = 0; i < u->interfaceWhiteList.size(); i++)
        s << (i ? "," : "") << u->interfaceWhiteList[i];
      if (u->interfaceWhiteList.empty()) s << "(all)";
      s << " receiveBufferSize=" << u->receiveBufferSize
        << " maxInitialPeersRange=" << u->maxInitialPeersRange << ")";
    } else if (std::dynamic_pointer_cast<eprosima::fastdds::rtps::SharedMemTransportDescriptor>(t)) {
      s << "SHM";
    } else {
      s << "other";
    }
  }
  const auto &b = q.wire_protocol().builtin;
  s << "] participant_id=" << q.wire_protocol().participant_id
    << " metatrafficUnicast=" << locators(b.metatrafficUnicastLocatorList)
    << " metatrafficMulticast=" << locators(b.metatrafficMulticastLocatorList)
    << " initialPeers=" << locators(b.initialPeersList)
    << " defaultUnicast=" << locators(q.wire_protocol().default_unicast_locator_list)
    << " defaultMulticast=" << locators(q.wire_protocol().default_multicast_locator_list)
    << " leaseDuration=" << b.discovery_config.leaseDuration.seconds << "s"
    << " announcementPeriod="
    << b.discovery_config.leaseDuration_announcementperiod.to_ns() / 1e9 << "s";
  return s.str();
}

}  // namespace perftest
