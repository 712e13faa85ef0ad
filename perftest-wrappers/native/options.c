/* Parsing of the Perftest command line (case-insensitive option names). */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *prog = "perftest_cyclone";

static void die(const char *fmt, const char *a, const char *b)
{
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  exit(2);
}

static long long to_int(const char *opt, const char *v, long long lo, long long hi)
{
  char *end;
  char range[96];
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x < lo || x > hi) {
    snprintf(range, sizeof range, "an integer from %lld to %lld", lo, hi);
    fprintf(stderr, "%s: invalid value '%s' for %s: must be %s\n", prog, v, opt, range);
    exit(2);
  }
  return x;
}

static double to_dbl(const char *opt, const char *v, double lo, double hi)
{
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(x >= lo && x <= hi)) {
    fprintf(stderr, "%s: invalid value '%s' for %s: must be a number from %g to %g\n", prog, v, opt,
            lo, hi);
    exit(2);
  }
  return x;
}

/* Perftest: -multicastAddr A sets throughput A, latency A+1, announcement A+2. */
static void set_mcast(pt_options_t *o, const char *v)
{
  unsigned a, b, c, d;
  char tail;
  if (sscanf(v, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a < 224 || a > 239 || b > 255 ||
      c > 255 || d > 253)
    die("invalid value '%s' for -multicastAddr: must be an IPv4 multicast address "
        "224.0.0.0-239.255.255.253%s", v, "");
  for (unsigned i = 0; i < 3; i++)
    snprintf(o->mcast_addr[i], sizeof o->mcast_addr[i], "%u.%u.%u.%u", a, b, c, d + i);
}

static void usage(void)
{
  printf("usage: %s -pub|-sub [options]\n"
         "Perftest 4.x options: -pidMultiPubTest N -sidMultiSubTest N -numPublishers N\n"
         "  -numSubscribers N -dataLen B -latencyCount N -executionTime S -numIter N -bestEffort\n"
         "  -multicast -multicastAddr A -nic IP|-allowInterfaces IP -peer ADDR (repeatable)\n"
         "  -domain N -latencyTest -noPrintIntervals -outputFormat csv|json|legacy -cpu\n"
         "  -latencyFile F -batchSize B -sendQueueSize N -keyed -instances N\n"
         "  -pubRate N[:spin|:sleep] (samples/s per publisher; spin by default, as Perftest)\n"
         "mcastlab extensions: -discoveryTimeout S (120) -finishTimeout S (10)\n"
         "  -leaseDuration S (30) -spdpInterval S (30; 10 in large tests) -maxParticipantIndex N\n"
         "  -noPrintConfig\n"
         "See perftest-wrappers/native/README.md.\n",
         prog);
}

void pt_parse_options(int argc, char **argv, pt_options_t *o)
{
  memset(o, 0, sizeof *o);
  o->num_pubs = o->num_subs = 1;
  o->data_len = 100;
  o->latency_count = 10000;
  o->print_intervals = true;
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
  set_mcast(o, "239.255.1.1");
  snprintf(o->mcast_addr[2], sizeof o->mcast_addr[2], "239.255.1.100");
  bool pid_set = false, sid_set = false;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define FLAG(name) (strcasecmp(a, name) == 0)
#define VALUE(name) (strcasecmp(a, name) == 0 && (v ? (i++, 1) : (die("option %s needs a value%s", name, ""), 0)))
    if (FLAG("-pub")) o->pub = true;
    else if (FLAG("-sub")) o->sub = true;
    else if (FLAG("-help") || FLAG("-h") || FLAG("--help")) { usage(); exit(0); }
    else if (VALUE("-pidMultiPubTest")) { o->pid = (int)to_int("-pidMultiPubTest", v, 0, 100000); pid_set = true; }
    else if (VALUE("-sidMultiSubTest")) { o->sid = (int)to_int("-sidMultiSubTest", v, 0, 100000); sid_set = true; }
    else if (VALUE("-numPublishers")) o->num_pubs = (int)to_int("-numPublishers", v, 1, 100000);
    else if (VALUE("-numSubscribers")) o->num_subs = (int)to_int("-numSubscribers", v, 1, 100000);
    else if (VALUE("-dataLen")) o->data_len = (int)to_int("-dataLen", v, PT_OVERHEAD_BYTES, PT_MAX_DATALEN);
    else if (VALUE("-latencyCount")) { o->latency_count = to_int("-latencyCount", v, 1, LLONG_MAX); o->latency_count_set = true; }
    else if (VALUE("-executionTime")) o->exec_time = to_dbl("-executionTime", v, 0.001, 1e9);
    else if (VALUE("-numIter")) o->num_iter = to_int("-numIter", v, 1, LLONG_MAX);
    else if (FLAG("-bestEffort")) o->best_effort = true;
    else if (FLAG("-multicast")) o->multicast = true;
    else if (VALUE("-multicastAddr")) { set_mcast(o, v); o->multicast = true; }
    else if (VALUE("-nic") || VALUE("-allowInterfaces")) {
      if (strlen(v) >= sizeof o->nic) die("invalid value '%s' for %s: too long", v, a);
      snprintf(o->nic, sizeof o->nic, "%s", v);
    }
    else if (VALUE("-peer")) {
      if (o->npeers >= PT_MAX_PEERS) die("too many -peer options%s%s", "", "");
      if (strchr(v, '<') || strchr(v, '"') || strchr(v, '&') || *v == '\0')
        die("invalid value '%s' for -peer: must be a host address%s", v, "");
      o->peers[o->npeers++] = v;
    }
    else if (VALUE("-domain")) o->domain = (int)to_int("-domain", v, 0, 232);
    else if (FLAG("-latencyTest")) o->latency_test = true;
    else if (FLAG("-noPrintIntervals") || FLAG("-noPrint")) o->print_intervals = false;
    else if (VALUE("-outputFormat")) {
      if (strcasecmp(v, "csv") == 0) o->format = FMT_CSV;
      else if (strcasecmp(v, "json") == 0) o->format = FMT_JSON;
      else if (strcasecmp(v, "legacy") == 0) o->format = FMT_LEGACY;
      else die("invalid value '%s' for -outputFormat: allowed csv, json, legacy%s", v, "");
    }
    else if (FLAG("-cpu")) o->cpu = true;
    else if (VALUE("-latencyFile")) o->latency_file = v;
    else if (VALUE("-batchSize")) o->batch_size = (int)to_int("-batchSize", v, 0, 64 * 1024 * 1024);
    else if (VALUE("-sendQueueSize")) o->send_queue_size = (int)to_int("-sendQueueSize", v, 1, 100000000);
    else if (FLAG("-keyed")) o->keyed = true;
    else if (VALUE("-pubRate")) {
      /* Perftest: -pubRate <samples/s>[:spin|:sleep], spin by default. */
      char num[32];
      const char *colon = strchr(v, ':');
      size_t len = colon ? (size_t)(colon - v) : strlen(v);
      if (len == 0 || len >= sizeof num) die("invalid value '%s' for -pubRate: must be N[:spin|:sleep]%s", v, "");
      memcpy(num, v, len);
      num[len] = '\0';
      o->pub_rate = to_int("-pubRate", num, 1, 10000000);
      if (colon == NULL || strcasecmp(colon + 1, "spin") == 0) o->pub_rate_sleep = false;
      else if (strcasecmp(colon + 1, "sleep") == 0) o->pub_rate_sleep = true;
      else die("invalid method in -pubRate %s: allowed spin, sleep%s", v, "");
    }
    else if (VALUE("-instances")) o->instances = (int)to_int("-instances", v, 1, 100000000);
    else if (VALUE("-discoveryTimeout")) o->discovery_timeout = to_dbl("-discoveryTimeout", v, 0.1, 1e6);
    else if (VALUE("-finishTimeout")) o->finish_timeout = to_dbl("-finishTimeout", v, 0.1, 1e6);
    else if (VALUE("-leaseDuration")) o->lease_duration = to_dbl("-leaseDuration", v, 1, 1e6);
    else if (VALUE("-spdpInterval")) o->spdp_interval = to_dbl("-spdpInterval", v, 0.1, 1e6);
    else if (VALUE("-maxParticipantIndex")) o->max_participant_index = (int)to_int("-maxParticipantIndex", v, 0, 120);
    else if (FLAG("-noPrintConfig")) o->print_config = false;
    else if (a[0] == '-') die("unknown or unsupported option %s (see -help)%s", a, "");
    else die("unexpected argument '%s' (options start with '-')%s", a, "");
#undef FLAG
#undef VALUE
  }

  if (o->pub == o->sub) die("exactly one of -pub and -sub is required%s%s", "", "");
  if (o->pub && sid_set) die("-sidMultiSubTest is a subscriber option (given with -pub)%s%s", "", "");
  if (o->sub && o->pub_rate > 0) die("-pubRate is a publisher option (given with -sub)%s%s", "", "");
  if (o->latency_test && o->pub_rate > 0) die("-pubRate cannot be used with -latencyTest%s%s", "", "");
  if (o->sub && pid_set) die("-pidMultiPubTest is a publisher option (given with -sub)%s%s", "", "");
  if (o->pid >= o->num_pubs) {
    char b[64];
    snprintf(b, sizeof b, "%d", o->num_pubs);
    die("-pidMultiPubTest must be below -numPublishers (%s)%s", b, "");
  }
  if (o->sid >= o->num_subs) {
    char b[64];
    snprintf(b, sizeof b, "%d", o->num_subs);
    die("-sidMultiSubTest must be below -numSubscribers (%s)%s", b, "");
  }
  if (o->latency_test) {
    if (o->num_pubs != 1) die("-latencyTest needs -numPublishers 1%s%s", "", "");
    if (!o->latency_count_set) o->latency_count = 1;
    if (o->latency_count != 1) die("-latencyCount must be 1 with -latencyTest%s%s", "", "");
    if (o->batch_size > 0) die("-batchSize must be 0 with -latencyTest (Perftest disables batching)%s%s", "", "");
  }
  if (o->instances > 1) o->keyed = true;
  /* Default (like Perftest on Connext Pro, which batches up to 8192 B): Cyclone's writer
     batching, a datagram is sent when full (MaxMessageSize) -- batch_size stays -1. Latency
     test and samples above 4096 B: no batching. Pings are flushed at once in every case. */
  if (o->batch_size < 0 && (o->latency_test || o->data_len * 2 > 8192)) o->batch_size = 0;
  /* Paced publishers send each sample when it is due: a batch would hold it back. */
  if (o->batch_size < 0 && o->pub_rate > 0) o->batch_size = 0;
  if (o->npeers > 0 && o->max_participant_index < 0)
    o->max_participant_index = (o->num_pubs + o->num_subs) > 120 ? 120 : (o->num_pubs + o->num_subs);
}
