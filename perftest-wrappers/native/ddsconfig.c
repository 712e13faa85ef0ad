/* Cyclone DDS configuration chosen by the agent (README.md, "Cyclone configuration" and
   "Perftest's ThroughputQos"). */
#define _GNU_SOURCE /* memfd_create */
#include "ddsconfig.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char xml[65536];
static size_t xml_len;
static int trace_fd = -1; /* Cyclone's configuration trace (pt_apply_config), -1: none */

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

bool pt_scale_settings(const pt_options_t *o)
{
  return (o->scale_settings || o->scale_discovery) && pt_large_test(o);
}

bool pt_scale_discovery_only(const pt_options_t *o) { return o->scale_discovery && pt_large_test(o); }

bool pt_first_nack_resend(const pt_options_t *o) { return o->first_nack_resend && o->multicast; }

double pt_heartbeat_interval_s(const pt_options_t *o)
{
  if (!pt_scale_settings(o)) return PT_HEARTBEAT_PERIOD_S;
  double p = (double)o->est_participants;
  double hb = p * p / 7500.0;
  hb = hb < 1.0 ? 1.0 : hb > 3.0 ? 3.0 : hb;
  /* whole milliseconds, as written in the configuration (-scaleDiscovery checks that the
     domain holds exactly this value before it changes it: perftiming.c) */
  return (double)llround(hb * 1e3) / 1e3;
}

double pt_spdp_interval_s(const pt_options_t *o)
{
  if (o->spdp_interval > 0) return o->spdp_interval;
  /* -scaleSettings: under the load of discovery the sockets drop datagrams (~20% of them
     with 150 processes on 2 cores, UdpRcvbufErrors); a participant that lost both a peer's
     multicast announcement and its unicast reply learns of it only at the peer's next
     periodic SPDP, 30 s later by default: measured, 3 subscribers stuck at 74 of 75
     publishers for 15 s. Every 10 s bounds that wait for little traffic (P announcements
     per 10 s). */
  return pt_scale_settings(o) ? 10.0 : 0.0;
}

long long pt_sample_bytes(const pt_options_t *o)
{
  /* Cyclone's WHC counts a sample as its serialised size (4-octet encapsulation header, the
     data padded to a multiple of 4: ddsi_serdata_default.c) plus 80 bytes per fragment of
     FragmentSize (dds_whc.c, whcn_size). */
  long long sz = 4 + (((long long)o->data_len + 3) / 4) * 4;
  return sz + (sz + PT_CYCLONE_FRAGMENT_SIZE - 1) / PT_CYCLONE_FRAGMENT_SIZE * 80;
}

long long pt_whc_high(const pt_options_t *o)
{
  /* A writer blocks when its unacknowledged bytes exceed WhcHigh: one byte below
     window x sample lets exactly the window's samples in. */
  return pt_window_samples(o) * pt_sample_bytes(o) - 1;
}

long long pt_whc_low(const pt_options_t *o)
{
  /* A blocked writer resumes at WhcLow: once one batch (one sample unbatched) of the
     window is acknowledged, as a Connext writer whose full send queue gets a free slot. */
  return (pt_window_samples(o) - pt_samples_per_batch(o)) * pt_sample_bytes(o);
}

const char *pt_config_xml(const pt_options_t *o, const char *trace_path)
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
  /* Perftest's message_size_max (64 KiB, DEFAULT_MESSAGE_SIZE_MAX): the largest UDP payload
     Cyclone builds (a batch, or the fragments of a large sample packed together). */
  add("<MaxMessageSize>%dB</MaxMessageSize>", PT_CYCLONE_MAX_MESSAGE_SIZE);
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
  /* Perftest's ThroughputQos (README, "Perftest's ThroughputQos"): heartbeats every 10 ms,
     1 ms while the window is nearly full (Cyclone halves its interval as the unacknowledged
     data grows, down to minsched); NACKs answered at once (Connext's heartbeat response
     delay 0; Cyclone's writers repair without delay); UDP socket buffers of 2 MiB (receive)
     and 1 MiB (send). Cyclone's HeartbeatInterval is one setting for every writer of the
     participant, the discovery writers' too (Connext gives those their own). With
     -scaleSettings in a large test: P^2 / 7500 s, 1 to 3 s (README, "-scaleSettings"). */
  double hb = pt_heartbeat_interval_s(o);
  if (pt_scale_settings(o))
    add("<HeartbeatInterval>%lldms</HeartbeatInterval>", llround(hb * 1e3));
  else
    add("<HeartbeatInterval min=\"%gms\" minsched=\"%gms\">%gms</HeartbeatInterval>",
        PT_FAST_HEARTBEAT_PERIOD_S * 1e3, PT_FAST_HEARTBEAT_PERIOD_S * 1e3, hb * 1e3);
  add("<NackDelay>0ms</NackDelay>");
  /* Cyclone sizes the buffers of every socket of the domain, the discovery traffic's too.
     With -scaleSettings in a large test it keeps its own (1 MiB receive requested): with
     Perftest's 2 MiB the sockets drop less during discovery but the processes have more
     datagrams to process, and 75 + 75 discovery took 107 s instead of 67 s (README,
     "-scaleSettings"). */
  /* -receiveBufferSize (Perftest's option) is applied in every case: a campaign that asks
     for a stock kernel's buffer ([matrix] receive_buffer) gets it during discovery too. */
  if (!pt_scale_settings(o) || o->receive_buffer_size > 0)
    add("<SocketReceiveBufferSize max=\"%dB\"/>", pt_recv_socket_buffer(o));
  if (!pt_scale_settings(o)) add("<SocketSendBufferSize max=\"%dB\"/>", PT_SEND_SOCKET_BUFFER);
  /* Connext resends a sample to the group once multicast_resend_threshold (2) readers NACK
     it. Cyclone's "never" comes close: a reader's repair goes to it alone, but one still
     queued when another reader's NACK of the sample arrives becomes one repair to the group
     (q_xmsg.c, merge_rexmit_destinations). -multicastResendOnFirstNack with -multicast:
     "adaptive", a repair of an in-sync reader goes to the writer's whole address set (the
     group) from the first NACK, later NACKs of it ignored for RetransmitMergingPeriod (5 ms;
     q_receive.c, handle_AckNack): threshold 1. In unicast runs there is no group. */
  if (pt_first_nack_resend(o)) add("<RetransmitMerging>adaptive</RetransmitMerging>");
  else add("<RetransmitMerging>never</RetransmitMerging>");
  /* The send window, Cyclone's flow control in bytes (README): a fixed window of exactly
     -sendQueueSize samples (or batches), not Cyclone's adaptive one. */
  long long high = pt_whc_high(o);
  add("<Watermarks><WhcAdaptive>false</WhcAdaptive><WhcHigh>%lldB</WhcHigh>"
      "<WhcHighInit>%lldB</WhcHighInit><WhcLow>%lldB</WhcLow></Watermarks>",
      high, high, pt_whc_low(o));
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
  /* Cyclone's dump of its effective configuration, read back for the effective QoS
     (pt_effective_config) and copied to stderr unless -noPrintConfig. */
  if (trace_path)
    add("<Tracing><Category>config</Category><OutputFile>%s</OutputFile></Tracing>", trace_path);
  add("</Domain></CycloneDDS>");
  return xml;
}

void pt_apply_config(const pt_options_t *o)
{
  /* An anonymous in-memory file for Cyclone's configuration trace: no file to clean up. */
  char path[64];
  trace_fd = memfd_create("cyclonedds-config", 0);
  if (trace_fd >= 0) snprintf(path, sizeof path, "/proc/self/fd/%d", trace_fd);
  const char *mine = pt_config_xml(o, trace_fd >= 0 ? path : NULL);
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

char *pt_effective_config(void)
{
  if (trace_fd < 0) return NULL;
  off_t len = lseek(trace_fd, 0, SEEK_END);
  if (len <= 0) return NULL;
  char *text = malloc((size_t)len + 1);
  if (text == NULL) abort();
  ssize_t got = pread(trace_fd, text, (size_t)len, 0);
  text[got > 0 ? got : 0] = '\0';
  return text;
}
