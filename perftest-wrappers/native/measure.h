/* The agents' protocol logic that does not touch DDS, shared by perftest-wrappers/native
   (Cyclone DDS, C) and perftest-wrappers/fastdds (Fast DDS, C++) as options.c and printer.c
   are: the process clock and stop flag, the startup and exit messages, the discovery wait,
   the publisher's pacing, FINISHED exchange and latency bookkeeping, the subscriber's loss
   accounting, reporting loop and summary. Each agent keeps its DDS entities, QoS, listeners
   and writes and lends them to this module through the callbacks below (ctx is passed
   back unchanged). The messages are the agents' contract (perftest-wrappers/native/README.md). */
#ifndef PERFTEST_MEASURE_H
#define PERFTEST_MEASURE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TestData_t's latency_ping (perftest.idl): the subscriber a ping is addressed to (>= 0), a
   plain data sample (Perftest's -1), or FINISHED (Perftest marks FINISHED by a 1235-octet
   bin_data instead, which a -dataLen of 1263 could not be told from); announcement kinds. */
enum { MS_PING_NONE = -1, MS_PING_FINISHED = -2 };
enum { MS_ANN_READY = 0, MS_ANN_FINISHED_ACK = 1 };

/* ---- TestData_t's fields (perftest.idl) ---------------------------------------------- */

/* The 64-bit sequence number nearest to ref (the next one expected) whose low 32 bits are
   wire: serial number arithmetic (RFC 1982) on TestData_t's 32-bit seq_num, so a run that
   sends more than 2^32 samples keeps counting. Never below 0: near the start a wire value
   "behind" ref is taken as it is. */
uint64_t ms_seq_unwrap(uint64_t ref, uint32_t wire);
/* A ping's send time (ns, ms_now_ns's clock) as timestamp_sec / timestamp_usec: microseconds,
   the high and the low 32 bits (Perftest's split); and back (ns, microsecond resolution). */
void ms_ts_to_wire(int64_t ns, int32_t *hi, uint32_t *lo);
int64_t ms_ts_from_wire(int32_t hi, uint32_t lo);
/* An instance key as TestData_t's key octets, least significant first (Perftest's order). */
void ms_key_to_wire(int32_t key, uint8_t out[4]);

/* ---- process ------------------------------------------------------------------------ */

/* Set by SIGINT and SIGTERM (ms_install_signals). */
extern volatile sig_atomic_t ms_stop;

/* First thing in main: the clock origin, a fixed mmap threshold, a 64 KiB stdout buffer;
   o is the options this module reads (parsed later, before any other call). */
void ms_init(const pt_options_t *o);
void ms_install_signals(void); /* SIGINT/SIGTERM set ms_stop; SIGPIPE ignored */
int64_t ms_now_ns(void);       /* CLOCK_MONOTONIC */
double ms_since_start(void);   /* seconds since ms_init */
void ms_sleep_ms(int ms);      /* returns early on a signal */
const char *ms_role(void);     /* "publisher" or "subscriber" */
int ms_id(void);               /* -pidMultiPubTest or -sidMultiSubTest */
int ms_count_true(const bool *a, int n);
/* "5, 17, 44" (at most 20 ids, then "...") of the ids i in [0,n) with !ok[i]. */
void ms_list_missing(const bool *ok, int n, char *out, size_t cap);

/* The startup lines on stderr: "<prog> (<middleware> <version>): publisher ...", the
   participants and, in a large test, the scale settings (scale_note: what -scaleSettings
   changed, "on: ..."; NULL when off) and the -executionTime/-numIter note. */
void ms_print_startup(const char *prog, const char *middleware, const char *version,
                      const char *scale_note);
/* -outputFile: stdout appended to that file. 0, or 2 after Perftest's message. */
int ms_open_output_file(void);
void ms_print_multicast(void); /* the -multicast groups line, when -multicast */
/* After the run: flushes stdout; in a large test, or one that SIGTERM or SIGINT stopped,
   prints the exit line and _exits without DDS teardown (peers drop this participant by its
   lease; a teardown can wait on peers still sending). Both agents call it. */
void ms_exit_if_no_teardown(int rc);
void ms_print_exit(int rc); /* "<role> <id>: exit <rc> after <s> s" */

/* ---- effective QoS ------------------------------------------------------------------ */

/* The effective QoS block on stderr, as Perftest prints its configuration at start: a
   heading, then one line per setting, "qos: <key> = <value> (<how>)", keys and values in the
   terms of Perftest's ThroughputQos (perftest-wrappers/perftest_throughput_qos.toml);
   experiments/agent_qos.py reads them into the run manifest. */
void ms_qos_heading(const char *middleware, const char *readme);
void ms_qos(const char *key, const char *value, const char *how_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* This process's IPv4 UDP sockets: how many, and the largest SO_RCVBUF and SO_SNDBUF that
   getsockopt reports (Linux reports twice the size requested with setsockopt). */
typedef struct {
  int sockets;
  long long rcvbuf_max, sndbuf_max;
} ms_sockbufs_t;
void ms_socket_buffers(ms_sockbufs_t *out);
/* This process's IPv4 UDP sockets: up to cap descriptors in fds; returns how many there are. */
#define MS_MAX_UDP_SOCKETS 256
int ms_udp_sockets(int *fds, int cap);
/* The socket buffer lines (transport.recv_socket_buffer_size, send_...): what the kernel
   granted, half of what getsockopt reports; how: the middleware's setting. */
void ms_qos_socket_buffers(const char *recv_how, const char *send_how);

/* ---- discovery ---------------------------------------------------------------------- */

/* Fills ok[0..n) with the peers found (timed_out: the last call, ids wanted for the message). */
typedef void (*ms_discovery_fill_fn)(bool *ok, bool timed_out, void *ctx);
typedef void (*ms_progress_fn)(void *ctx); /* the progress line, every 5 s */

/* Polls fill until all n peers are found (true), -discoveryTimeout passes or a signal
   arrives (false), with the "waiting for" and progress lines. */
bool ms_wait_discovery(int n, bool *ok, ms_discovery_fill_fn fill, ms_progress_fn progress,
                       void *ctx);
/* Tables begin (Perftest: when the test starts): pr_begin and, with -cpu, the CPU origin. */
void ms_begin_tables(void);

/* ---- publisher ---------------------------------------------------------------------- */

/* The discovery outcome of a publisher: false (the message printed) when it failed;
   otherwise prints "discovery complete" if complete and begins the tables. lat_m: the
   Latency reader's matches, NULL without one. */
bool ms_pub_discovered(bool complete, const bool *ok, const bool *ready, const bool *tp_m,
                       const bool *lat_m);

/* The send schedule: -executionTime, -numIter and -pubRate (an absolute schedule; more than
   100 ms behind restarts it instead of bursting). */
typedef struct {
  int64_t t_send, t_end, period_ns, due;
} ms_pace_t;
void ms_pace_init(ms_pace_t *p);
/* Waits until sample seq is due; false when the test is over. */
bool ms_pace_next(ms_pace_t *p, uint64_t seq);

/* What sample seq carries (pings: pings sent so far). */
typedef struct {
  int32_t key, ping_to; /* ping_to -1: not a ping */
  bool ping;
} ms_sample_t;
ms_sample_t ms_sample_plan(uint64_t seq, uint64_t pings);
void ms_print_sent(uint64_t seq, uint64_t pings, const ms_pace_t *p); /* the "sent" line */

/* Writes FINISHED once: 1 accepted, 0 not now (writer blocked), -1 failed (message printed). */
typedef int (*ms_write_fn)(void *ctx);
typedef void (*ms_poll_fn)(void *ctx); /* takes the announcements (ready, acked) */
/* The FINISHED exchange until every subscriber acknowledged (acked, filled by poll) or the
   bounded wait ends: 0, or 1 when some did not acknowledge. */
int ms_pub_finish(const bool *acked, ms_write_fn write_finished, ms_poll_fn poll, void *ctx);

/* Latency (publisher 0). A ping's stamp and addressee; the sample carries the rest. */
typedef struct {
  uint64_t seq;
  int32_t ping_to;
  int64_t ts;
} ms_ping_t;
typedef void (*ms_ping_fn)(const ms_ping_t *ping, void *ctx);

void ms_latency_init(void); /* before the Latency reader exists */
/* An echo received at t_ns (the listener; sent_ts: ms_ts_from_wire of its timestamp,
   sub_id: its entity_id, seq_num: its seq_num): recorded, printed, and with -latencyTest
   the next ping sent from here. */
void ms_latency_echo(int64_t t_ns, int64_t sent_ts, int32_t sub_id, uint32_t seq_num);
/* -latencyTest: pings one at a time until t_end or -numIter (a lost ping or echo is
   re-sent after a timeout); the echo listener sends the next one. Returns pings sent. */
uint64_t ms_latency_test(int64_t t_end, ms_ping_fn send, void *ctx);
void ms_latency_summary(void); /* the latency summary, -latencyFile, the stderr notes */

/* ---- subscriber --------------------------------------------------------------------- */

void ms_sub_init(void); /* before the Throughput reader exists */

/* One listener call's samples: ms_sub_begin, ms_sub_sample for each valid sample,
   ms_sub_end. t: the arrival time (the caller may update it per sample). */
typedef struct {
  int64_t t;
  uint64_t got, lost;
} ms_batch_t;
void ms_sub_begin(ms_batch_t *b, int64_t t);
/* Loss accounting (seq_num unwrapped per publisher), FINISHED (latency_ping
   MS_PING_FINISHED); true for a data sample of a known publisher (to be echoed when its
   latency_ping is this subscriber). */
bool ms_sub_sample(ms_batch_t *b, int32_t pub_id, int32_t latency_ping, uint32_t seq_num);
void ms_sub_end(ms_batch_t *b);
void ms_sub_echoed(void); /* an echo written */

/* The discovery outcome of a subscriber: false (the message printed) when it failed;
   otherwise prints "discovery complete" if complete. */
bool ms_sub_discovered(bool complete, const bool *ok);

/* Refreshes tp_m[0..num_pubs) (the publishers matched now; was: those matched at the start). */
typedef void (*ms_matched_fn)(bool *tp_m, const bool *was, void *ctx);
/* Announces FINISHED received: newest, and the bitmap of all so far. */
typedef void (*ms_ack_fn)(int newest, const uint8_t *bits, uint32_t len, void *ctx);
/* The receive loop (when complete): interval rows, FINISHED acknowledgements, vanished and
   idle publishers. Returns 0, or 1 on an idle timeout or vanished publishers. */
int ms_sub_receive(bool complete, const bool *was, ms_matched_fn matched, ms_ack_fn ack,
                   void *ctx);
void ms_sub_summary(void); /* the throughput summary and the "received" line */

#ifdef __cplusplus
}
#endif

#endif
