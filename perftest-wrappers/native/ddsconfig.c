/* Cyclone DDS configuration chosen by the agent (see README.md, "Cyclone settings"). */
#include "ddsconfig.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char xml[65536];
static size_t xml_len;

static void add(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(xml + xml_len, sizeof xml - xml_len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof xml - xml_len) {
    fprintf(stderr, "perftest_cyclone: configuration too long (too many -peer options?)\n");
    exit(2);
  }
  xml_len += (size_t)n;
}

const char *pt_mode_description(const pt_options_t *o)
{
  if (o->npeers > 0)
    return o->multicast ? "data: multicast groups; discovery: unicast peers list (+ multicast SPDP)"
                        : "data: unicast; discovery: unicast peers list (AllowMulticast=false)";
  return o->multicast ? "data: multicast groups; discovery: multicast SPDP and SEDP"
                      : "data: unicast; discovery: multicast SPDP only (AllowMulticast=spdp)";
}

double pt_heartbeat_interval_s(const pt_options_t *o)
{
  double p = (double)o->est_participants;
  double hb = p * p / 7500.0;
  return hb < 1.0 ? 1.0 : hb > 3.0 ? 3.0 : hb;
}

double pt_spdp_interval_s(const pt_options_t *o)
{
  if (o->spdp_interval > 0) return o->spdp_interval;
  /* Large tests: under the load of discovery the sockets drop datagrams (~20% of them with
     150 processes on 2 cores, UdpRcvbufErrors); a participant that lost both a peer's
     multicast announcement and its unicast reply learns of it only at the peer's next
     periodic SPDP, 30 s later by default: measured, 3 subscribers stuck at 74 of 75
     publishers for 15 s. Every 10 s bounds that wait for little traffic (P announcements
     per 10 s). Larger socket buffers avoided the drops but processing every datagram made
     discovery slower (75 + 75 unicast, discovery max over 4 runs each: 36-51 s with 4 MiB,
     32-38 s with Cyclone's 1 MiB and a 10 s SPDP interval). */
  return pt_large_test(o) ? 10.0 : 0.0;
}

const char *pt_config_xml(const pt_options_t *o)
{
  xml_len = 0;
  xml[0] = '\0';
  const char *allow = o->npeers > 0 ? (o->multicast ? "asm" : "false") : (o->multicast ? "true" : "spdp");
  add("<CycloneDDS><Domain id=\"any\"><General>");
  add("<AllowMulticast>%s</AllowMulticast>", allow);
  add("<MulticastTimeToLive>32</MulticastTimeToLive>");
  if (o->nic[0])
    add("<Interfaces><NetworkInterface %s=\"%s\"/></Interfaces>", o->nic_is_name ? "name" : "address",
        o->nic);
  add("</General><Discovery>");
  add("<LeaseDuration>%gs</LeaseDuration>", o->lease_duration);
  double spdp = pt_spdp_interval_s(o);
  if (spdp > 0) add("<SPDPInterval>%gs</SPDPInterval>", spdp);
  if (o->npeers > 0) {
    add("<ParticipantIndex>auto</ParticipantIndex>");
    add("<MaxAutoParticipantIndex>%d</MaxAutoParticipantIndex>", o->max_participant_index);
    add("<Peers>");
    for (int i = 0; i < o->npeers; i++) add("<Peer address=\"%s\"/>", o->peers[i]);
    add("</Peers>");
  }
  add("</Discovery><Internal>");
  /* Many participants: discovery is all-to-all, and each of a participant's five reliable
     built-in writers (SEDP publications and subscriptions, participant messages, the two
     type-lookup writers) heartbeats to all its P-1 peers once per HeartbeatInterval for as
     long as peers keep appearing (Cyclone resets the heartbeat back-off on every new match).
     With unicast SEDP that is 5 P (P-1) / interval datagrams per second, and as many
     ACKNACKs: at P = 150 and Cyclone's 100 ms, 1.1 M/s, far beyond 2 cores. The interval
     grows with P^2 so the rate stays near 5 x 7500 / s: 1 s up to P = 86, 3 s at P = 150
     (measured, 75 + 75 on 2 cores: discovery median 51-74 s with 1 s, 30-34 s with 3 s). */
  bool large = pt_large_test(o);
  if (large) add("<HeartbeatInterval>%.2fs</HeartbeatInterval>", pt_heartbeat_interval_s(o));
  long long whc = 0;
  if (o->send_queue_size > 0)
    whc = (long long)o->send_queue_size * o->data_len;
  else if (large)
    /* A subscriber's backlog is numPublishers x each writer's unacknowledged window, and
       every writer ends the test with a full window, so FINISHED waits behind it: 75 x
       64 KiB (Cyclone counts ~200 B per 100 B sample: 328 samples) at ~3 k samples/s per
       subscriber took ~8 s to drain (measured). 32 KiB halves that; it is still ~4 x the
       bandwidth-delay product (3 k samples/s over 75 writers, ~1 s heartbeat round trip). */
    whc = 32768;
  if (whc > 0) {
    if (whc < 16384) whc = 16384;
    add("<Watermarks><WhcAdaptive>false</WhcAdaptive><WhcHigh>%lldB</WhcHigh>"
        "<WhcHighInit>%lldB</WhcHighInit><WhcLow>%lldB</WhcLow></Watermarks>",
        whc, whc, whc / 2);
  }
  add("</Internal>");
  if (o->multicast) {
    add("<Partitioning><NetworkPartitions>"
        "<NetworkPartition Name=\"throughput\" Address=\"%s\"/>"
        "<NetworkPartition Name=\"latency\" Address=\"%s\"/>"
        "<NetworkPartition Name=\"announcement\" Address=\"%s\"/>"
        "</NetworkPartitions><PartitionMappings>"
        "<PartitionMapping DCPSPartitionTopic=\"perftest.Throughput\" NetworkPartition=\"throughput\"/>"
        "<PartitionMapping DCPSPartitionTopic=\"perftest.Latency\" NetworkPartition=\"latency\"/>"
        "<PartitionMapping DCPSPartitionTopic=\"perftest.Announcement\" "
        "NetworkPartition=\"announcement\"/>"
        "</PartitionMappings></Partitioning>",
        o->mcast_addr[0], o->mcast_addr[1], o->mcast_addr[2]);
  }
  if (o->print_config)
    add("<Tracing><Category>config</Category><OutputFile>stderr</OutputFile></Tracing>");
  add("</Domain></CycloneDDS>");
  return xml;
}

void pt_apply_config(const pt_options_t *o)
{
  const char *mine = pt_config_xml(o);
  const char *user = getenv("CYCLONEDDS_URI");
  size_t n = strlen(mine) + (user ? strlen(user) + 2 : 1);
  char *uri = malloc(n);
  if (uri == NULL) abort();
  snprintf(uri, n, "%s%s%s", mine, (user && *user) ? "," : "", (user && *user) ? user : "");
  fprintf(stderr, "config: %s\n", pt_mode_description(o));
  if (o->pub && o->pub_rate > 0)
    fprintf(stderr, "config: publication rate %lld samples/s (%s; no batching)\n", o->pub_rate,
            o->pub_rate_sleep ? "sleep" : "spin");
  fprintf(stderr, "config: agent Cyclone XML: %s\n", mine);
  if (user && *user)
    fprintf(stderr, "config: user CYCLONEDDS_URI applied after the agent's (it overrides): %s\n", user);
  setenv("CYCLONEDDS_URI", uri, 1);
  free(uri);
}
