/* The native agent's effective QoS in the terms of Perftest's ThroughputQos (effective.h):
   Cyclone's own trace of its effective configuration (ddsconfig.c), the QoS read back from
   the Throughput writer or reader, and the sockets' buffers as the kernel reports them. */
#include "effective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddsconfig.h"
#include "measure.h"

/* The value of a configuration path in Cyclone's trace ("config: Domain/Internal/
   NackDelay/#text: 0 s {0}"), or "" when absent. */
static const char *cfg(const char *trace, const char *path, char *buf, size_t cap)
{
  buf[0] = '\0';
  if (trace == NULL) return buf;
  char key[160];
  snprintf(key, sizeof key, "config: %s: ", path);
  const char *p = strstr(trace, key);
  if (p == NULL) return buf;
  p += strlen(key);
  size_t n = strcspn(p, "{\n");
  while (n > 0 && p[n - 1] == ' ') n--;
  if (n >= cap) n = cap - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
  return buf;
}

/* Cyclone's units (ddsi_config.c: unittab_duration, unittab_memsize; kB is 1024 there). */
static double parse_unit(const char *v, const char *const *names, const double *mult)
{
  char *end;
  double x = strtod(v, &end);
  if (end == v) return -1;
  while (*end == ' ') end++;
  for (int i = 0; names[i]; i++)
    if (strcmp(end, names[i]) == 0) return x * mult[i];
  return -1;
}

static double duration_s(const char *v)
{
  static const char *const names[] = {"ns", "us", "ms", "s", "min", "hr", "day", NULL};
  static const double mult[] = {1e-9, 1e-6, 1e-3, 1, 60, 3600, 86400};
  if (strcmp(v, "inf") == 0) return 1e300;
  return parse_unit(v, names, mult);
}

static long long memsize(const char *v)
{
  static const char *const names[] = {"B", "KiB", "kB", "MiB", "MB", "GiB", "GB", NULL};
  static const double mult[] = {1, 1024, 1024, 1048576, 1048576, 1073741824, 1073741824};
  return (long long)parse_unit(v, names, mult);
}

static const char *ms_text(double s, char *buf, size_t cap)
{
  if (s < 0) snprintf(buf, cap, "unknown");
  else snprintf(buf, cap, "%g ms", s * 1e3);
  return buf;
}

/* Samples (or batches, k samples each) held by `bytes` of Cyclone's writer history. */
static double units(long long bytes, long long sample, int k) { return (double)bytes / (double)sample / k; }

void pt_report_fast_heartbeat(double hb_s, double minsched_s, const char *when)
{
  /* Cyclone halves the interval at half the window, again at three quarters and again while
     the writer is blocked (q_hbcontrol.c, writer_hbcontrol_intv), never below minsched. */
  double fast = hb_s < 0 || minsched_s < 0 ? -1 : hb_s / 8 > minsched_s ? hb_s / 8 : minsched_s;
  char v[32], m[32];
  ms_qos("writer.fast_heartbeat_period", ms_text(fast, v, sizeof v),
         "Cyclone halves HeartbeatInterval at half the window, again at three quarters and "
         "again while the writer is blocked, down to minsched %s%s", ms_text(minsched_s, m, sizeof m),
         when);
}

static void writer_lines(const pt_options_t *o, dds_entity_t wr, const char *trace)
{
  char v[96], a[96], b[96], c[96];
  dds_qos_t *q = dds_create_qos();
  dds_reliability_kind_t rel = DDS_RELIABILITY_BEST_EFFORT;
  dds_duration_t block = 0;
  dds_history_kind_t hist = DDS_HISTORY_KEEP_LAST;
  int32_t depth = 1;
  if (dds_get_qos(wr, q) == 0) {
    dds_qget_reliability(q, &rel, &block);
    dds_qget_history(q, &hist, &depth);
  }
  dds_delete_qos(q);
  bool reliable = rel == DDS_RELIABILITY_RELIABLE;
  ms_qos("writer.reliability", reliable ? "RELIABLE" : "BEST_EFFORT", "read back from the writer");
  snprintf(v, sizeof v, "KEEP_LAST %d", depth);
  ms_qos("writer.history", hist == DDS_HISTORY_KEEP_ALL ? "KEEP_ALL" : v, "read back from the writer");
  if (reliable)
    ms_qos("writer.max_blocking_time", "infinite",
           "dds_write waits of %g s, repeated until the test ends: no sample is dropped",
           (double)block / 1e9);
  snprintf(v, sizeof v, "%d B", o->batch_size);
  if (o->batch_size > 0)
    ms_qos("writer.batching", v,
           "Cyclone write batching, flushed every %d samples of -dataLen %d (Perftest's count of "
           "a batch) and at each ping", pt_samples_per_batch(o), o->data_len);
  else
    ms_qos("writer.batching", "off", "one datagram per dds_write");

  /* The send window and the heartbeat watermarks, from the effective Watermarks. */
  long long high = memsize(cfg(trace, "Domain/Internal/Watermarks/WhcHigh/#text", a, sizeof a));
  long long low = memsize(cfg(trace, "Domain/Internal/Watermarks/WhcLow/#text", b, sizeof b));
  const char *adaptive = cfg(trace, "Domain/Internal/Watermarks/WhcAdaptive/#text", c, sizeof c);
  long long sample = pt_sample_bytes(o);
  int k = pt_samples_per_batch(o);
  const char *unit = k > 1 ? "batches" : "samples";
  bool known = high > 0 && low >= 0 && strcmp(adaptive, "false") == 0;
  if (!reliable || hist != DDS_HISTORY_KEEP_ALL) {
    ms_qos("writer.send_window", "none", "not a reliable KEEP_ALL writer");
  } else if (!known) {
    ms_qos("writer.send_window", "unknown",
           "Cyclone's effective Watermarks not found, or WhcAdaptive %s", adaptive);
  } else {
    double mid = (double)low + (double)(high - low) / 2;
    snprintf(v, sizeof v, "%g %s", units(high + 1, sample, k), unit);
    ms_qos("writer.send_window", v,
           "Cyclone Watermarks WhcHigh %lld B: a writer blocks above it; Cyclone counts a sample "
           "as %lld B (serialised size + 80), %d per batch",
           high, sample, k);
    /* Cyclone halves the heartbeat interval from the midpoint between WhcLow and WhcHigh
       (q_transmit.c, writer_hbcontrol_intv) and, from there, asks for an acknowledgement in
       heartbeats it piggybacks; a blocked writer resumes at WhcLow. */
    snprintf(v, sizeof v, "%g", (double)(long long)(units((long long)mid, sample, k) + 0.999999));
    ms_qos("writer.high_watermark", v,
           "%s: Cyclone's faster heartbeats start halfway between WhcLow and WhcHigh, "
           "%.0f B", unit, mid);
    /* Where a blocked writer resumes, from the effective WhcLow (a user's CYCLONEDDS_URI may
       have moved it from the agent's one batch below the window). */
    double resume = units(high + 1 - low, sample, k);
    snprintf(v, sizeof v, "%g", units(low, sample, k));
    ms_qos("writer.low_watermark", v,
           "%s: Cyclone WhcLow %lld B, where a blocked writer resumes: once %g %s of a full "
           "window %s acknowledged%s",
           unit, low, resume, resume == 1 ? (k > 1 ? "batch" : "sample") : unit,
           resume == 1 ? "is" : "are",
           low == pt_whc_low(o) ? "" : " (not the agent's WhcLow, one batch below the window: "
                                       "set in CYCLONEDDS_URI)");
  }
  ms_qos("writer.heartbeats_per_max_samples", "none",
         "Cyclone piggybacks a heartbeat on a datagram at most every 100 us and asks for an "
         "acknowledgement in it only past the faster-heartbeat level or 8 ms after the previous "
         "write (q_transmit.c)");
  double hb = duration_s(cfg(trace, "Domain/Internal/HeartbeatInterval/#text", a, sizeof a));
  double minsched = duration_s(cfg(trace, "Domain/Internal/HeartbeatInterval[@minsched]", b, sizeof b));
  ms_qos("writer.heartbeat_period", ms_text(hb, v, sizeof v),
         "Cyclone HeartbeatInterval, one setting for every writer, the discovery writers' too");
  pt_report_fast_heartbeat(hb, minsched, "");
  ms_qos("writer.late_joiner_heartbeat_period", "none",
         "Cyclone has no separate late-joiner heartbeat; Throughput is volatile");
  ms_qos("writer.max_heartbeat_retries", "unlimited",
         "Cyclone keeps heartbeating a reliable reader that does not acknowledge");
  const char *merge = cfg(trace, "Domain/Internal/RetransmitMerging/#text", a, sizeof a);
  ms_qos("writer.min_nack_response_delay", "0 ms",
         "Cyclone queues the repair when the NACK arrives (RetransmitMerging %s)", merge);
  /* Connext's multicast_resend_threshold: how many NACKing readers make a repair go to the
     group (ddsconfig.c). Cyclone "adaptive" sends it there from the first NACK of an in-sync
     reader; with "never" a reader's repair goes to it alone, but a repair still queued when
     a second reader's NACK of the sample arrives is merged into one to the writer's address
     set (q_xmsg.c, merge_rexmit_destinations): the group. Without a group there is none. */
  bool first = strcmp(merge, "adaptive") == 0 || strcmp(merge, "always") == 0;
  const char *how = !o->multicast ? "unicast data: no group to repair to"
                    : first ? "a repair goes to the group from the first NACK; later NACKs of that "
                              "sample within RetransmitMergingPeriod are ignored"
                            : "a NACKing reader gets its own repair, unless another reader's repair "
                              "of that sample is still queued: then one repair goes to the group";
  ms_qos("writer.multicast_resend_threshold", !o->multicast ? "none" : first ? "1" : "2",
         "Cyclone RetransmitMerging %s: %s", merge, how);
  ms_qos("writer.max_nack_response_delay", "0 ms", "as min_nack_response_delay");
  /* Cyclone sends a writer's periodic heartbeats to its address set: the group where the
     readers joined one (AllowMulticast true), each reader otherwise; heartbeats that answer
     a reader's NACK go to that reader (measured: tests/captures/test_protocol_factors_netns.py). */
  ms_qos("writer.multicast_periodic_heartbeat", o->multicast ? "on" : "off",
         o->multicast ? "Cyclone sends periodic heartbeats to the writer's address set, the group"
                      : "unicast data: a periodic heartbeat to each reader");
}

static void reader_lines(dds_entity_t rd, const char *trace)
{
  char v[96], a[96];
  dds_qos_t *q = dds_create_qos();
  dds_reliability_kind_t rel = DDS_RELIABILITY_BEST_EFFORT;
  dds_duration_t block = 0;
  dds_history_kind_t hist = DDS_HISTORY_KEEP_LAST;
  int32_t depth = 1, max_samples = -1, max_instances = -1, per_instance = -1;
  if (dds_get_qos(rd, q) == 0) {
    dds_qget_reliability(q, &rel, &block);
    dds_qget_history(q, &hist, &depth);
    dds_qget_resource_limits(q, &max_samples, &max_instances, &per_instance);
  }
  dds_delete_qos(q);
  ms_qos("reader.reliability", rel == DDS_RELIABILITY_RELIABLE ? "RELIABLE" : "BEST_EFFORT", "read back from the reader");
  snprintf(v, sizeof v, "KEEP_LAST %d", depth);
  ms_qos("reader.history", hist == DDS_HISTORY_KEEP_ALL ? "KEEP_ALL" : v, "read back from the reader");
  double nack = duration_s(cfg(trace, "Domain/Internal/NackDelay/#text", a, sizeof a));
  const char *how = "Cyclone NackDelay, for heartbeats that do not ask for an answer; one that "
                    "asks is answered at once";
  ms_qos("reader.min_heartbeat_response_delay", ms_text(nack, v, sizeof v), "%s", how);
  ms_qos("reader.max_heartbeat_response_delay", v, "%s", how);
  snprintf(v, sizeof v, "%d", max_samples);
  ms_qos("reader.max_samples", max_samples < 0 ? "unlimited" : v, "read back from the reader");
  snprintf(v, sizeof v, "%d", per_instance);
  ms_qos("reader.max_samples_per_instance", per_instance < 0 ? "unlimited" : v, "read back from the reader");
  ms_qos("reader.initial_samples", "none", "Cyclone allocates samples as they arrive");
  snprintf(v, sizeof v, "%d", max_samples);
  ms_qos("reader.max_samples_per_remote_writer", max_samples < 0 ? "unlimited" : v,
         "no per-writer limit in Cyclone: max_samples bounds every writer's samples, as it does "
         "in Perftest, whose per-writer limit equals it");
  ms_qos("reader.max_samples_per_read", "256",
         "the listener repeats dds_takecdr of 256 samples until the reader is empty");
}

void pt_report_qos(const pt_options_t *o, dds_entity_t entity)
{
  char *trace = pt_effective_config();
  char a[96], b[96];
  ms_qos_heading("Cyclone DDS", "perftest-wrappers/native/README.md");
  if (trace == NULL)
    fprintf(stderr, "config: Cyclone's configuration trace is missing (a Tracing setting in "
                    "CYCLONEDDS_URI?): Cyclone's settings below are unknown\n");
  if (o->pub) writer_lines(o, entity, trace);
  else reader_lines(entity, trace);
  char recv_how[160], send_how[160];
  snprintf(recv_how, sizeof recv_how, "Cyclone SocketReceiveBufferSize max=%s",
           cfg(trace, "Domain/Internal/SocketReceiveBufferSize[@max]", a, sizeof a));
  snprintf(send_how, sizeof send_how, "Cyclone SocketSendBufferSize max=%s",
           cfg(trace, "Domain/Internal/SocketSendBufferSize[@max]", b, sizeof b));
  ms_qos_socket_buffers(recv_how, send_how);
  long long mms = memsize(cfg(trace, "Domain/General/MaxMessageSize/#text", a, sizeof a));
  snprintf(b, sizeof b, "%lld B", mms);
  ms_qos("transport.message_size_max", mms > 0 ? b : "unknown",
         "Cyclone MaxMessageSize: the largest UDP payload it builds; samples above FragmentSize "
         "%s are sent as DATA_FRAG fragments packed into such datagrams",
         cfg(trace, "Domain/General/FragmentSize/#text", a, sizeof a));
  if (trace && o->print_config) fputs(trace, stderr);
  free(trace);
}
