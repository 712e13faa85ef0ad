/* Command line of the native agent: RTI Perftest 4.x names plus documented extensions. */
#ifndef PERFTEST_OPTIONS_H
#define PERFTEST_OPTIONS_H

#include <stdbool.h>
#include "perftest_qos.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PT_MAX_PEERS 256
#define PT_OVERHEAD_BYTES 28 /* Perftest's minimum -dataLen */
#define PT_MAX_DATALEN (16 * 1024 * 1024)
#define PT_LARGE_TEST 20 /* publishers + subscribers above which a test is "large" (README) */
#define PT_DEFAULT_SEND_QUEUE_SIZE 50 /* Perftest's -sendQueueSize (ParameterManager.cxx) */
#define PT_DEFAULT_BATCH_SIZE 8192    /* Perftest's -batchSize (DEFAULT_THROUGHPUT_BATCH_SIZE) */

typedef enum { FMT_CSV, FMT_JSON, FMT_LEGACY } pt_format_t;

/* -transport: absent (Perftest's default, its XML profile's UDPv4|SHMEM), UDPv4 or SHMEM. */
typedef enum { PT_TRANSPORT_DEFAULT, PT_TRANSPORT_UDPV4, PT_TRANSPORT_SHMEM } pt_transport_t;

typedef struct {
  bool pub, sub;
  int pid, sid;
  int num_pubs, num_subs;    /* Perftest gives each role the other side's count only */
  int est_participants;      /* publishers + subscribers, as estimated (options.c) */
  bool total_participants_set; /* -totalParticipants N gave it */
  bool both_counts;          /* -numPublishers and -numSubscribers both given */
  bool num_iter_set;
  int data_len;
  long long latency_count;
  bool latency_count_set;
  double exec_time;          /* seconds, 0 = none */
  long long num_iter;        /* Perftest: 1e8 (1e7 with -latencyTest) */
  bool best_effort;
  bool multicast;
  pt_transport_t transport;
  char mcast_addr[3][16];    /* throughput, latency, announcement */
  char nic[64];
  bool nic_is_name;          /* -nic eth0 (an interface name) rather than an address */
  const char *peers[PT_MAX_PEERS];
  int npeers;
  int peer_index_hint;       /* highest N of the -peer N@address forms (0: none) */
  int domain;
  bool latency_test;
  bool print_intervals;
  bool print_headers;        /* -noOutputHeaders clears it */
  const char *output_file;   /* -outputFile F: the tables are appended to F */
  pt_format_t format;
  bool cpu;
  const char *latency_file;
  int batch_size;            /* bytes per batch, 0: no batching (resolved as Perftest does) */
  bool batch_size_set;       /* -batchSize was given */
  int send_queue_size;       /* -1 = not given (pt_send_queue_size) */
  bool keyed;
  int instances;
  long long pub_rate;         /* -pubRate N: samples/s per publisher, 0 = as fast as possible */
  bool pub_rate_sleep;       /* -pubRate N:sleep (default spin, as Perftest) */
  /* mcastlab extensions */
  double discovery_timeout;  /* -discoveryTimeout S */
  double finish_timeout;     /* -finishTimeout S */
  double lease_duration;     /* -leaseDuration S */
  double spdp_interval;      /* -spdpInterval S */
  int max_participant_index; /* -maxParticipantIndex N (unicast discovery) */
  bool print_config;         /* -noPrintConfig clears it */
  bool scale_settings;       /* -scaleSettings: the discovery tuning of large tests (README) */
  bool scale_discovery;      /* -scaleDiscovery: that tuning until discovery completes, then
                                Perftest's heartbeat timing and socket buffers (README) */
  int receive_buffer_size;   /* -receiveBufferSize B, 0: not given (pt_recv_socket_buffer) */
  bool first_nack_resend;    /* -multicastResendOnFirstNack: with -multicast, a repair goes to
                                the group from the first NACK (Connext's threshold 1) */
} pt_options_t;

/* More than PT_LARGE_TEST participants: no DDS teardown at exit, and with -scaleSettings the
   discovery tuning (heartbeat and SPDP intervals; README). */
static inline bool pt_large_test(const pt_options_t *o)
{
  return o->est_participants > PT_LARGE_TEST;
}

/* The UDP sockets' receive buffer to request: -receiveBufferSize, else Perftest's. */
static inline int pt_recv_socket_buffer(const pt_options_t *o)
{
  return o->receive_buffer_size > 0 ? o->receive_buffer_size : PT_RECV_SOCKET_BUFFER;
}

/* Parses argv as Perftest 4.3's ParameterManager does (option names are case-insensitive
   prefixes, resolved in Perftest's table order; an option of the other role is an error);
   on error prints Perftest's message(s) on stderr and exits with status 2.
   "-help" / "-h" prints usage and exits 0. */
void pt_parse_options(int argc, char **argv, pt_options_t *o);

/* The agent that parses (options.c is shared by perftest-wrappers/native and
   perftest-wrappers/fastdds): the program name that prefixes every message, how messages
   name the agent ("the native agent"), its middleware ("Cyclone DDS"), its README and the
   -spdpInterval default shown by -help ("30; 10 in large tests"). Call before
   pt_parse_options; the defaults are the native agent's. */
/* The agent's shared-memory support, before pt_parse_options: NULL when it has a
   shared-memory transport (then no -transport means UDPv4|SHMEM, as Perftest), else why
   not (then -transport SHMEM is refused with that reason, and no -transport means UDPv4). */
void pt_set_shmem(const char *why_not);

/* The transports the agent really uses: "UDPv4", "SHMEM" or "UDPv4|SHMEM". */
const char *pt_transport_name(const pt_options_t *o);

void pt_set_agent(const char *prog, const char *agent, const char *middleware, const char *readme,
                  const char *spdp_default);

/* The Throughput writer's send window as Perftest sizes it (RTIDDSImpl.cxx): -sendQueueSize
   (50) samples, or as many batches when batching; a batch holds -batchSize / -dataLen
   samples (Perftest's own count), so the window is pt_window_samples samples. */
int pt_send_queue_size(const pt_options_t *o);
int pt_samples_per_batch(const pt_options_t *o); /* 1 without batching */
long long pt_window_samples(const pt_options_t *o);

#ifdef __cplusplus
}
#endif

#endif
