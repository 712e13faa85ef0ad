/* Parsing of the Perftest command line, with RTI Perftest 4.3's rules (read in rtiperftest
   4.3 srcCppCommon/ParameterManager.cxx and srcCpp/perftest_cpp.cxx):
   - an argument selects the first option, in Perftest's table order (its parameter names,
     sorted), whose name it is a case-insensitive prefix of: "-latency" is -latencyCount,
     "-noPrint" is -noPrintIntervals, "-PUB" is -pub;
   - a value that is missing or starts with '-' is "Missing '<x>' after '-opt'";
   - an option of the publisher group given with -sub (or of the subscriber group with -pub)
     is "Cannot use '-opt' while setting '-sub'.";
   - Perftest options the agent cannot map onto Cyclone DDS are refused as Perftest refuses
     an option its middleware does not support.
   Every error exits with status 2. mcastlab's own options come after Perftest's table, so
   they never change what an abbreviation means to Perftest. */
#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *prog = "perftest_cyclone";
static const char *agent_name = "the native agent";
static const char *middleware = "Cyclone DDS";
static const char *readme = "perftest-wrappers/native/README.md";
static const char *spdp_default = "30; 10 with -scaleSettings in large tests";
static const char *shmem_missing =
    "Cyclone DDS 0.10.2 (Debian 12) is built without a shared-memory transport (no iceoryx)";

void pt_set_shmem(const char *why_not) { shmem_missing = why_not; }

const char *pt_transport_name(const pt_options_t *o)
{
  if (o->transport == PT_TRANSPORT_SHMEM) return "SHMEM";
  if (o->transport == PT_TRANSPORT_UDPV4 || shmem_missing) return "UDPv4";
  return "UDPv4|SHMEM";
}

void pt_set_agent(const char *p, const char *agent, const char *mw, const char *rd,
                  const char *spdp)
{
  prog = p;
  agent_name = agent;
  middleware = mw;
  readme = rd;
  spdp_default = spdp;
}

static void die(const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

typedef enum { G_GENERAL, G_PUB, G_SUB, G_TRANSPORT, G_OTHER, G_EXT } group_t;

typedef enum {
  O_UNSUPPORTED,
  O_ALLOW_INTERFACES, O_BATCH_SIZE, O_BEST_EFFORT, O_CPU, O_DATA_LEN, O_DOMAIN,
  O_EXECUTION_TIME, O_INSTANCES, O_KEYED, O_LATENCY_COUNT, O_LATENCY_FILE, O_LATENCY_TEST,
  O_MULTICAST, O_MULTICAST_ADDR, O_NIC, O_NO_OUTPUT_HEADERS, O_NO_PRINT_INTERVALS,
  O_NUM_ITER, O_NUM_PUBLISHERS, O_NUM_SUBSCRIBERS, O_OUTPUT_FILE, O_OUTPUT_FORMAT, O_PEER,
  O_PID, O_PUB, O_PUB_RATE, O_SEND_QUEUE_SIZE, O_SID, O_SUB, O_TRANSPORT,
  O_DISCOVERY_TIMEOUT, O_FINISH_TIMEOUT, O_LEASE_DURATION, O_SPDP_INTERVAL,
  O_MAX_PARTICIPANT_INDEX, O_NO_PRINT_CONFIG, O_TOTAL_PARTICIPANTS, O_SCALE_SETTINGS,
  O_SCALE_DISCOVERY,
  O_RECEIVE_BUFFER_SIZE,
  O_FIRST_NACK_RESEND,
  O__COUNT
} opt_id_t;

typedef struct {
  const char *name; /* as Perftest spells it */
  const char *arg;  /* value placeholder, NULL: a flag */
  group_t group;
  opt_id_t id;
} opt_def_t;

/* Perftest 4.3's options in its table order (std::map of the parameter names), then
   mcastlab's. Placeholders and groups as ParameterManager.cxx declares them. */
static const opt_def_t OPTS[] = {
  {"-allowInterfaces", "<ipaddr>", G_TRANSPORT, O_ALLOW_INTERFACES},
  {"-asynchronous", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-batchSize", "<bytes>", G_PUB, O_BATCH_SIZE},
  {"-bestEffort", NULL, G_GENERAL, O_BEST_EFFORT},
  {"-cacheStats", NULL, G_OTHER, O_UNSUPPORTED},
  {"-cft", "<start>:<end>", G_SUB, O_UNSUPPORTED},
  {"-checkConsistency", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-collectorPeer", "<address>", G_GENERAL, O_UNSUPPORTED},
  {"-compressionId", "<id>", G_GENERAL, O_UNSUPPORTED},
  {"-compressionLevel", "<level>", G_GENERAL, O_UNSUPPORTED},
  {"-compressionThreshold", "<bytes>", G_GENERAL, O_UNSUPPORTED},
  {"-cpu", NULL, G_GENERAL, O_CPU},
  {"-crc", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-crcKind", "<kind>", G_GENERAL, O_UNSUPPORTED},
  {"-dataLen", "<bytes>", G_GENERAL, O_DATA_LEN},
  {"-doNotDropNetworkCapture", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-domain", "<id>", G_GENERAL, O_DOMAIN},
  {"-durability", "<0|1|2|3>", G_GENERAL, O_UNSUPPORTED},
  {"-dynamicData", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-enableAutoThrottle", NULL, G_PUB, O_UNSUPPORTED},
  {"-enableInstanceStateRecovery", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-enableMonitoring2", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-enableTurboMode", NULL, G_PUB, O_UNSUPPORTED},
  {"-executionTime", "<sec>", G_PUB, O_EXECUTION_TIME},
  {"-fastQueue", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-flatData", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-flowController", "<flow>", G_GENERAL, O_UNSUPPORTED},
  {"-initialBurstSize", "<samples>", G_PUB, O_UNSUPPORTED},
  {"-instanceHashBuckets", "<count>", G_GENERAL, O_UNSUPPORTED},
  {"-instances", "<count>", G_GENERAL, O_INSTANCES},
  {"-keepDurationUsec", "<usec>", G_GENERAL, O_UNSUPPORTED},
  {"-keyed", NULL, G_GENERAL, O_KEYED},
  {"-latencyCount", "<count>", G_PUB, O_LATENCY_COUNT},
  {"-latencyFile", "<file>", G_PUB, O_LATENCY_FILE},
  {"-latencyTest", NULL, G_PUB, O_LATENCY_TEST},
  {"-lightWeightSecurity", NULL, G_OTHER, O_UNSUPPORTED},
  {"-loadDataFromFile", "<file>", G_PUB, O_UNSUPPORTED},
  {"-loaningSendReceive", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-lowResolutionClock", NULL, G_PUB, O_UNSUPPORTED},
  {"-maximumAllocableBufferSize", "<bytes>", G_PUB, O_UNSUPPORTED},
  {"-messageSizeMax", "<bytes>", G_GENERAL, O_UNSUPPORTED},
  {"-multicast", NULL, G_TRANSPORT, O_MULTICAST},
  {"-multicastAddr", "<address>", G_TRANSPORT, O_MULTICAST_ADDR},
  {"-networkCapture", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-nic", "<ipaddr/name>", G_TRANSPORT, O_NIC},
  {"-noBlockingSockets", NULL, G_OTHER, O_UNSUPPORTED},
  {"-noDirectCommunication", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-noOutputHeaders", NULL, G_GENERAL, O_NO_OUTPUT_HEADERS},
  {"-noPositiveAcks", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-noPrintIntervals", NULL, G_GENERAL, O_NO_PRINT_INTERVALS},
  {"-noXmlQos", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-numIter", "<count>", G_PUB, O_NUM_ITER},
  {"-numPublishers", "<count>", G_SUB, O_NUM_PUBLISHERS},
  {"-numSubscribers", "<count>", G_PUB, O_NUM_SUBSCRIBERS},
  {"-outputFile", "<file>", G_GENERAL, O_OUTPUT_FILE},
  {"-outputFormat", "<format>", G_GENERAL, O_OUTPUT_FORMAT},
  {"-peer", "<address>", G_TRANSPORT, O_PEER},
  {"-pidMultiPubTest", "<id>", G_PUB, O_PID},
  {"-preallocateFragmentedSamples", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-pub", NULL, G_PUB, O_PUB},
  {"-pubRate", "<samples/s>:<method>", G_PUB, O_PUB_RATE},
  {"-pubRatebps", "<bps>:<method>", G_PUB, O_UNSUPPORTED},
  {"-qosFile", "<filename>", G_GENERAL, O_UNSUPPORTED},
  {"-qosLibrary", "<lib name>", G_GENERAL, O_UNSUPPORTED},
  {"-rawTransport", NULL, G_OTHER, O_UNSUPPORTED},
  {"-receiveBufferSize", "<bytes>", G_GENERAL, O_RECEIVE_BUFFER_SIZE},
  {"-receiveQueueSize", "<number>", G_GENERAL, O_UNSUPPORTED},
  {"-secureCertAuthority", "<file>", G_OTHER, O_UNSUPPORTED},
  {"-secureCertFile", "<file>", G_OTHER, O_UNSUPPORTED},
  {"-secureDebug", "<level>", G_OTHER, O_UNSUPPORTED},
  {"-secureEnableAAD", NULL, G_OTHER, O_UNSUPPORTED},
  {"-secureEncryptionAlgorithm", "<value>", G_OTHER, O_UNSUPPORTED},
  {"-secureGovernanceFile", "<file>", G_OTHER, O_UNSUPPORTED},
  {"-secureLibrary", "<file>", G_OTHER, O_UNSUPPORTED},
  {"-securePSK", "<seed>", G_OTHER, O_UNSUPPORTED},
  {"-securePSKAlgorithm", "<value>", G_OTHER, O_UNSUPPORTED},
  {"-securePermissionsFile", "<file>", G_OTHER, O_UNSUPPORTED},
  {"-securePrivateKey", "<file>", G_OTHER, O_UNSUPPORTED},
  {"-secureRtpsHmacOnly", "<seed>", G_OTHER, O_UNSUPPORTED},
  {"-sendBufferSize", "<bytes>", G_GENERAL, O_UNSUPPORTED},
  {"-sendQueueSize", "<number>", G_GENERAL, O_SEND_QUEUE_SIZE},
  {"-showSerializationTime", NULL, G_PUB, O_UNSUPPORTED},
  {"-showResourceLimits", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-sidMultiSubTest", "<id>", G_SUB, O_SID},
  {"-sleep", "<millisec>", G_PUB, O_UNSUPPORTED},
  {"-spin", "<count>", G_PUB, O_UNSUPPORTED},
  {"-sub", NULL, G_SUB, O_SUB},
  {"-threadCPUAffinity", "<A:B:C:D>", G_GENERAL, O_UNSUPPORTED},
  {"-threadPriorities", "<X:Y:Z>", G_GENERAL, O_UNSUPPORTED},
  {"-transport", "<kind>", G_TRANSPORT, O_TRANSPORT},
  {"-transportCertAuthority", "<file>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportCertFile", "<file>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportHostPort", "<port>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportPrivateKey", "<file>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportPublicAddress", "<ipaddr:port>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportSecureWan", NULL, G_TRANSPORT, O_UNSUPPORTED},
  {"-transportServerBindPort", "<port>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportVerbosity", "<level>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportWan", NULL, G_TRANSPORT, O_UNSUPPORTED},
  {"-transportWanId", "<id>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportWanServerAddress", "<a.b.c.d>", G_TRANSPORT, O_UNSUPPORTED},
  {"-transportWanServerPort", "<port>", G_TRANSPORT, O_UNSUPPORTED},
  {"-unbounded", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-useReadThread", NULL, G_GENERAL, O_UNSUPPORTED},
  {"-verbosity", "<level>", G_GENERAL, O_UNSUPPORTED},
  {"-waitsetDelayUsec", "<usec>", G_GENERAL, O_UNSUPPORTED},
  {"-waitsetEventCount", "<count>", G_GENERAL, O_UNSUPPORTED},
  {"-writeInstance", "<instance>", G_PUB, O_UNSUPPORTED},
  {"-writerStats", NULL, G_PUB, O_UNSUPPORTED},
  {"-zeroCopy", NULL, G_GENERAL, O_UNSUPPORTED},
  /* mcastlab extensions */
  {"-discoveryTimeout", "<sec>", G_EXT, O_DISCOVERY_TIMEOUT},
  {"-finishTimeout", "<sec>", G_EXT, O_FINISH_TIMEOUT},
  {"-leaseDuration", "<sec>", G_EXT, O_LEASE_DURATION},
  {"-spdpInterval", "<sec>", G_EXT, O_SPDP_INTERVAL},
  {"-maxParticipantIndex", "<n>", G_EXT, O_MAX_PARTICIPANT_INDEX},
  {"-noPrintConfig", NULL, G_EXT, O_NO_PRINT_CONFIG},
  {"-totalParticipants", "<n>", G_EXT, O_TOTAL_PARTICIPANTS},
  {"-scaleSettings", NULL, G_EXT, O_SCALE_SETTINGS},
  {"-scaleDiscovery", NULL, G_EXT, O_SCALE_DISCOVERY},
  {"-multicastResendOnFirstNack", NULL, G_EXT, O_FIRST_NACK_RESEND},
};
#define NOPTS (sizeof OPTS / sizeof OPTS[0])

/* Perftest's IS_OPTION: the argument is a case-insensitive prefix of the option name. */
static const opt_def_t *lookup(const char *a)
{
  size_t n = strlen(a);
  if (n < 2) return NULL;
  for (size_t i = 0; i < NOPTS; i++)
    if (strlen(OPTS[i].name) >= n && strncasecmp(a, OPTS[i].name, n) == 0) return &OPTS[i];
  return NULL;
}

static long long to_int(const char *opt, const char *v, long long lo, long long hi)
{
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x < lo || x > hi)
    die("invalid value '%s' for %s: must be an integer from %lld to %lld", v, opt, lo, hi);
  return x;
}

static double to_dbl(const char *opt, const char *v, double lo, double hi)
{
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(x >= lo && x <= hi))
    die("invalid value '%s' for %s: must be a number from %g to %g", v, opt, lo, hi);
  return x;
}

static bool parse_ipv4(const char *v, unsigned char b[4])
{
  struct in_addr a;
  if (inet_pton(AF_INET, v, &a) != 1) return false;
  memcpy(b, &a.s_addr, 4);
  return true;
}

/* Perftest: -multicastAddr A sets Throughput A, Latency A+1, Announcement A+2 (A at most
   239.255.255.253); -multicastAddr A,B,C sets the three. */
static void set_mcast(pt_options_t *o, const char *v)
{
  char buf[64];
  if (strlen(v) >= sizeof buf) die("invalid value '%s' for -multicastAddr: too long", v);
  snprintf(buf, sizeof buf, "%s", v);
  char *parts[4];
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == 3) { n = 4; break; }
    parts[n++] = tok;
  }
  if (n != 1 && n != 3)
    die("invalid value '%s' for -multicastAddr: must be one address or three separated by ','", v);
  for (int i = 0; i < n; i++) {
    unsigned char b[4];
    if (!parse_ipv4(parts[i], b) || b[0] < 224 || b[0] > 239 ||
        (n == 1 && b[0] == 239 && b[1] == 255 && b[2] == 255 && b[3] > 253))
      die("invalid value '%s' for -multicastAddr: must be IPv4 multicast address%s%s", v,
          n == 1 ? "es 224.0.0.0-239.255.255.253" : "es", n == 1 ? " (A, A+1, A+2 are used)" : "");
    if (n == 3) {
      snprintf(o->mcast_addr[i], sizeof o->mcast_addr[i], "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
    } else {
      for (unsigned k = 0; k < 3; k++) {
        unsigned host = ((unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3]) + k;
        snprintf(o->mcast_addr[k], sizeof o->mcast_addr[k], "%u.%u.%u.%u", host >> 24,
                 (host >> 16) & 255, (host >> 8) & 255, host & 255);
      }
    }
  }
}

static void usage(void)
{
  printf("usage: %s -pub|-sub [options]\n"
         "Perftest 4.3 options (names are case-insensitive prefixes, as in Perftest):\n"
         "  general: -dataLen B -domain N (1) -bestEffort -keyed -instances N -cpu\n"
         "    -noPrintIntervals -noOutputHeaders -outputFormat csv|json|legacy -outputFile F\n"
         "    -sendQueueSize N -receiveBufferSize B (Perftest's 2097152)\n"
         "  publisher only: -pidMultiPubTest N -numSubscribers N -latencyCount N\n"
         "    -executionTime S -numIter N -latencyTest -latencyFile F -batchSize B\n"
         "    -pubRate N[:spin|:sleep] (samples/s per publisher; spin by default, as Perftest)\n"
         "  subscriber only: -sidMultiSubTest N -numPublishers N\n"
         "  transport: -multicast -multicastAddr A|A,B,C -nic IP|NAME (-allowInterfaces)\n"
         "    -peer ADDR (repeatable) -transport UDPv4|SHMEM (%s)\n"
         "mcastlab extensions: -discoveryTimeout S (120) -finishTimeout S (10)\n"
         "  -leaseDuration S (30) -spdpInterval S (%s) -maxParticipantIndex N\n"
         "  -noPrintConfig -totalParticipants N (2 x the other side's count)\n"
         "  -scaleSettings (off: discovery tuning for more than %d participants, README)\n"
         "  -scaleDiscovery (off: that tuning until discovery completes, then Perftest's\n"
         "    heartbeat timing and socket buffers; Cyclone DDS agent only)\n"
         "  -multicastResendOnFirstNack (off: with -multicast, a repair goes to the group\n"
         "    from the first NACK, not the second; Cyclone DDS agent only)\n"
         "See %s.\n",
         prog, shmem_missing ? "UDPv4 only: no shared memory in this middleware"
                             : "default: both, as Perftest's XML profile",
         spdp_default, PT_LARGE_TEST, readme);
}

void pt_parse_options(int argc, char **argv, pt_options_t *o)
{
  memset(o, 0, sizeof *o);
  o->num_pubs = o->num_subs = 1;
  o->data_len = 100;
  o->latency_count = 10000;
  o->num_iter = 100000000LL;
  o->domain = 1;
  o->print_intervals = true;
  o->print_headers = true;
  o->format = FMT_CSV;
  o->batch_size = -1;
  o->send_queue_size = -1;
  o->instances = 1;
  o->discovery_timeout = 120.0;
  o->finish_timeout = 10.0;
  o->lease_duration = 30.0;
  o->spdp_interval = 0.0;
  o->max_participant_index = -1;
  o->print_config = true;
  snprintf(o->mcast_addr[0], sizeof o->mcast_addr[0], "239.255.1.1");
  snprintf(o->mcast_addr[1], sizeof o->mcast_addr[1], "239.255.1.2");
  snprintf(o->mcast_addr[2], sizeof o->mcast_addr[2], "239.255.1.100");

  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-help") == 0 || strcmp(argv[i], "-h") == 0 ||
        strcmp(argv[i], "--help") == 0) {
      usage();
      exit(0);
    }

  bool set[O__COUNT] = {false};
  const opt_def_t *given[O__COUNT] = {NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const opt_def_t *d = lookup(a);
    if (d == NULL) {
      if (a[0] == '-') die("Cannot parse '%s', invalid input.", a);
      die("Cannot parse '%s', invalid input (options start with '-').", a);
    }
    const char *v = NULL;
    if (d->arg) {
      if (i + 1 >= argc || argv[i + 1][0] == '-') die("Missing '%s' after '%s'", d->arg, d->name);
      v = argv[++i];
    }
    if (d->id == O_UNSUPPORTED)
      die("[Error] Parser: '%s' Not supported by the Middleware implementation (%s on %s; "
          "see %s).", d->name, agent_name, middleware, readme);
    set[d->id] = true;
    given[d->id] = d;
    switch (d->id) {
    case O_PUB: o->pub = true; break;
    case O_SUB: o->sub = true; break;
    case O_PID: o->pid = (int)to_int(d->name, v, 0, 100000); break;
    case O_SID: o->sid = (int)to_int(d->name, v, 0, 100000); break;
    case O_NUM_PUBLISHERS: o->num_pubs = (int)to_int(d->name, v, 1, 100000); break;
    case O_NUM_SUBSCRIBERS: o->num_subs = (int)to_int(d->name, v, 1, 100000); break;
    case O_DATA_LEN: o->data_len = (int)to_int(d->name, v, PT_OVERHEAD_BYTES, PT_MAX_DATALEN); break;
    case O_LATENCY_COUNT: o->latency_count = to_int(d->name, v, 1, LLONG_MAX); break;
    case O_EXECUTION_TIME: o->exec_time = to_dbl(d->name, v, 0.001, 1e9); break;
    case O_NUM_ITER: o->num_iter = to_int(d->name, v, 1, LLONG_MAX); break;
    case O_BEST_EFFORT: o->best_effort = true; break;
    case O_MULTICAST: o->multicast = true; break;
    case O_MULTICAST_ADDR: set_mcast(o, v); o->multicast = true; break;
    case O_NIC:
    case O_ALLOW_INTERFACES: {
      unsigned char b[4];
      if (strlen(v) >= sizeof o->nic || *v == '\0' || strpbrk(v, "<>&\"' ") != NULL)
        die("invalid value '%s' for %s: must be an interface address or name", v, d->name);
      snprintf(o->nic, sizeof o->nic, "%s", v);
      o->nic_is_name = !parse_ipv4(v, b);
      break;
    }
    case O_PEER: {
      if (o->npeers >= PT_MAX_PEERS) die("too many -peer options (at most %d)", PT_MAX_PEERS);
      /* Connext's peer descriptor [N@]address, N = the highest participant id to contact
         (also "[N]" or "[A-B]"), as RTI command lines carry it: the address goes to
         Cyclone's Peers, N raises the participant indices probed on every peer. */
      const char *at = strchr(v, '@');
      const char *addr = at ? at + 1 : v;
      if (strpbrk(addr, "<\"&@") != NULL || *addr == '\0')
        die("invalid value '%s' for -peer: must be [N@]host address", v);
      if (at) {
        long hi = -1;
        for (const char *c = v; c < at; c++) {
          if (*c >= '0' && *c <= '9') {
            char *end;
            long x = strtol(c, &end, 10);
            if (x > hi) hi = x;
            c = end - 1;
          } else if (*c != '[' && *c != ']' && *c != '-')
            die("invalid value '%s' for -peer: the part before '@' must be N, [N] or [A-B]", v);
        }
        if (hi < 0 || hi > 120) die("invalid value '%s' for -peer: participant id from 0 to 120", v);
        if (hi > o->peer_index_hint) o->peer_index_hint = (int)hi;
      }
      o->peers[o->npeers++] = addr;
      break;
    }
    case O_DOMAIN: o->domain = (int)to_int(d->name, v, 0, 232); break;
    case O_LATENCY_TEST: o->latency_test = true; break;
    case O_NO_PRINT_INTERVALS: o->print_intervals = false; break;
    case O_NO_OUTPUT_HEADERS: o->print_headers = false; break;
    case O_OUTPUT_FILE: o->output_file = v; break;
    case O_OUTPUT_FORMAT:
      if (strcasecmp(v, "csv") == 0) o->format = FMT_CSV;
      else if (strcasecmp(v, "json") == 0) o->format = FMT_JSON;
      else if (strcasecmp(v, "legacy") == 0) o->format = FMT_LEGACY;
      else die("invalid value '%s' for -outputFormat: allowed csv, json, legacy", v);
      break;
    case O_CPU: o->cpu = true; break;
    case O_LATENCY_FILE: o->latency_file = v; break;
    case O_BATCH_SIZE: o->batch_size = (int)to_int(d->name, v, 0, 64 * 1024 * 1024); break;
    case O_SEND_QUEUE_SIZE: o->send_queue_size = (int)to_int(d->name, v, 1, 100000000); break;
    case O_KEYED: o->keyed = true; break;
    case O_TRANSPORT:
      /* Perftest's values that the agents carry: UDPv4, SHMEM (when the middleware has it). */
      if (strcasecmp(v, "UDPv4") == 0) o->transport = PT_TRANSPORT_UDPV4;
      else if (strcasecmp(v, "SHMEM") == 0 && !shmem_missing) o->transport = PT_TRANSPORT_SHMEM;
      else if (strcasecmp(v, "SHMEM") == 0)
        die("invalid value '%s' for -transport: %s: %s; allowed: UDPv4", v, agent_name, shmem_missing);
      else
        die("invalid value '%s' for -transport: %s supports %s", v, agent_name,
            shmem_missing ? "UDPv4" : "UDPv4, SHMEM (default: both, as Perftest)");
      break;
    case O_PUB_RATE: {
      /* Perftest: -pubRate <samples/s>[:spin|:sleep], spin by default. */
      char num[32];
      const char *colon = strchr(v, ':');
      size_t len = colon ? (size_t)(colon - v) : strlen(v);
      if (len == 0 || len >= sizeof num) die("invalid value '%s' for -pubRate: must be N[:spin|:sleep]", v);
      memcpy(num, v, len);
      num[len] = '\0';
      o->pub_rate = to_int("-pubRate", num, 1, 10000000);
      if (colon == NULL || strcasecmp(colon + 1, "spin") == 0) o->pub_rate_sleep = false;
      else if (strcasecmp(colon + 1, "sleep") == 0) o->pub_rate_sleep = true;
      else die("invalid method in -pubRate %s: allowed spin, sleep", v);
      break;
    }
    case O_INSTANCES: o->instances = (int)to_int(d->name, v, 1, 100000000); break;
    case O_DISCOVERY_TIMEOUT: o->discovery_timeout = to_dbl(d->name, v, 0.1, 1e6); break;
    case O_FINISH_TIMEOUT: o->finish_timeout = to_dbl(d->name, v, 0.1, 1e6); break;
    case O_LEASE_DURATION: o->lease_duration = to_dbl(d->name, v, 1, 1e6); break;
    case O_SPDP_INTERVAL: o->spdp_interval = to_dbl(d->name, v, 0.1, 1e6); break;
    case O_MAX_PARTICIPANT_INDEX: o->max_participant_index = (int)to_int(d->name, v, 0, 120); break;
    case O_NO_PRINT_CONFIG: o->print_config = false; break;
    case O_TOTAL_PARTICIPANTS: o->est_participants = (int)to_int(d->name, v, 2, 200000); break;
    case O_SCALE_SETTINGS: o->scale_settings = true; break;
    case O_SCALE_DISCOVERY: o->scale_discovery = true; break;
    case O_RECEIVE_BUFFER_SIZE:
      /* Perftest's option: the UDP sockets' receive buffer (the kernel caps it at
         net.core.rmem_max and reports twice the size set). */
      o->receive_buffer_size = (int)to_int(d->name, v, 1024, 1 << 30);
      break;
    case O_FIRST_NACK_RESEND: o->first_nack_resend = true; break;
    case O_UNSUPPORTED:
    case O__COUNT: break;
    }
  }

  if (o->pub && o->sub) die("Cannot use '-pub' while setting '-sub'.");
  if (o->scale_settings && o->scale_discovery)
    die("-scaleSettings and -scaleDiscovery exclude each other: the first keeps the discovery "
        "tuning for the whole test, the second only until discovery completes");
  if (!o->pub && !o->sub) die("one of -pub and -sub is required (%s has no default role)", agent_name);
  /* Perftest's role check: every option of the other role's group, in table order, one
     message each. One exception (mcastlab's runner relies on it, NATIVE_CROSS_ROLE in
     experiments/agent_options.py): the other side's count, -numPublishers with -pub and
     -numSubscribers with -sub, is accepted, for the id range check and the scale settings;
     RTI Perftest refuses it, so command lines meant for both agents leave it out. */
  int bad = 0;
  for (size_t k = 0; k < NOPTS; k++) {
    const opt_def_t *d = &OPTS[k];
    if (d->id == O_UNSUPPORTED || given[d->id] != d) continue;
    if ((d->id == O_NUM_PUBLISHERS && o->pub) || (d->id == O_NUM_SUBSCRIBERS && o->sub)) continue;
    if (d->group == G_PUB && o->sub) {
      fprintf(stderr, "%s: Cannot use '%s' while setting '-sub'.\n", prog, d->name);
      bad++;
    } else if (d->group == G_SUB && o->pub) {
      fprintf(stderr, "%s: Cannot use '%s' while setting '-pub'.\n", prog, d->name);
      bad++;
    }
  }
  if (bad) exit(2);

  if (o->latency_test) {
    if (o->pid != 0) die("Only the publisher with ID = 0 can run the latency test");
    if (!set[O_LATENCY_COUNT]) o->latency_count = 1;
    if (!set[O_NUM_ITER]) o->num_iter = 10000000LL;
    if (o->latency_count != 1)
      die("-latencyCount must be 1 with -latencyTest (%s's latency test pings with every "
          "sample)", agent_name);
    if (o->batch_size > 0) die("-batchSize must be 0 with -latencyTest (Perftest disables batching)");
    if (o->pub_rate > 0) die("-pubRate cannot be used with -latencyTest");
  }
  if (o->pub && set[O_NUM_PUBLISHERS] && o->pid >= o->num_pubs)
    die("-pidMultiPubTest must be below -numPublishers (%d)", o->num_pubs);
  if (o->sub && set[O_NUM_SUBSCRIBERS] && o->sid >= o->num_subs)
    die("-sidMultiSubTest must be below -numSubscribers (%d)", o->num_subs);
  if (o->pub && o->num_iter < o->latency_count)
    die("numIter (%lld) must be greater than latencyCount (%lld).", o->num_iter, o->latency_count);
  o->total_participants_set = set[O_TOTAL_PARTICIPANTS];
  o->num_iter_set = set[O_NUM_ITER];
  if (o->instances > 1) o->keyed = true;
  /* Publishers + subscribers (for the peer indices probed with -peer, the DDS teardown at
     exit and -scaleSettings), but Perftest gives a publisher only -numSubscribers and a
     subscriber only -numPublishers: -totalParticipants, or both counts when the runner
     gives them (see the role check), or as many on each side as the count given (the
     study's N x N tests); printed in the effective configuration. */
  o->both_counts = set[O_NUM_PUBLISHERS] && set[O_NUM_SUBSCRIBERS];
  if (set[O_TOTAL_PARTICIPANTS]) {
  } else if (o->both_counts) {
    o->est_participants = o->num_pubs + o->num_subs;
  } else {
    o->est_participants = 2 * (o->pub ? o->num_subs : o->num_pubs);
  }
  /* Batching as Perftest on Connext Pro (RTIDDSImpl.cxx 4.3): -batchSize 8192 by default;
     none in a latency test, and none when a batch cannot hold two samples (-batchSize below
     2 x -dataLen). Pings are flushed at once in every case (README). */
  bool batch_given = o->batch_size >= 0;
  o->batch_size_set = batch_given;
  if (o->batch_size < 0) o->batch_size = o->latency_test ? 0 : PT_DEFAULT_BATCH_SIZE;
  if (o->batch_size > 0 && o->batch_size < 2 * o->data_len) o->batch_size = 0;
  /* Paced publishers send each sample when it is due: a batch would hold it back. */
  if (!batch_given && o->pub_rate > 0) o->batch_size = 0;
  if (o->npeers > 0 && o->max_participant_index < 0) {
    int n = o->est_participants > o->peer_index_hint ? o->est_participants : o->peer_index_hint;
    o->max_participant_index = n > 120 ? 120 : n;
  }
}

int pt_send_queue_size(const pt_options_t *o)
{
  return o->send_queue_size > 0 ? o->send_queue_size : PT_DEFAULT_SEND_QUEUE_SIZE;
}

int pt_samples_per_batch(const pt_options_t *o)
{
  int k = o->batch_size > 0 ? o->batch_size / o->data_len : 1;
  return k > 1 ? k : 1;
}

long long pt_window_samples(const pt_options_t *o)
{
  return (long long)pt_send_queue_size(o) * pt_samples_per_batch(o);
}
