/* perftest_cyclone: RTI Perftest-compatible throughput/latency test on Eclipse Cyclone DDS.
 *
 * Topics (DDS partition "perftest"):
 *   Throughput   publishers -> subscribers  data, pings (ping_to >= 0) and FINISHED
 *   Latency      subscribers -> publisher 0 echoes of pings (only publisher 0 reads it)
 *   Announcement subscribers -> publishers  "ready" and "FINISHED received" (transient-local)
 * Tables go to stdout (printer.c), configuration and progress to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "dds/version.h"
#include "ddsconfig.h"
#include "options.h"
#include "perftest.h"
#include "printer.h"

enum { KIND_DATA = 0, KIND_FINISHED = 1, KIND_ECHO = 2 };
enum { ANN_READY = 0, ANN_FINISHED_ACK = 1 };
#define TAKE_N 256
#define PARTITION "perftest"

static pt_options_t opt;
static volatile sig_atomic_t g_stop;
static int64_t t_start;
static dds_entity_t dp, tp_topic, lat_topic, ann_topic, dpub, dsub;

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double since_start(void) { return (double)(now_ns() - t_start) / 1e9; }

static void sleep_ms(int ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_stop) {
  }
}

static void on_signal(int sig)
{
  (void)sig;
  g_stop = 1;
}

static const char *role(void) { return opt.pub ? "publisher" : "subscriber"; }
static int my_id(void) { return opt.pub ? opt.pid : opt.sid; }

static void fatal_dds(const char *what, dds_return_t rc)
{
  fprintf(stderr, "%s %d: %s failed: %s\n", role(), my_id(), what, dds_strretcode(rc));
  exit(1);
}

/* ---- QoS and entities ------------------------------------------------------------- */

static dds_qos_t *data_qos(bool writer, const char *tag, int id)
{
  dds_qos_t *q = dds_create_qos();
  if (opt.best_effort) {
    dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    dds_qset_history(q, writer ? DDS_HISTORY_KEEP_LAST : DDS_HISTORY_KEEP_ALL, 1);
  } else {
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  }
  char ud[32];
  int n = snprintf(ud, sizeof ud, "%s=%d", tag, id);
  dds_qset_userdata(q, ud, (size_t)n);
  return q;
}

static dds_qos_t *ann_qos(const char *tag, int id)
{
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
  dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  char ud[32];
  int n = snprintf(ud, sizeof ud, "%s=%d", tag, id);
  dds_qset_userdata(q, ud, (size_t)n);
  return q;
}

static dds_entity_t mk_writer(dds_entity_t topic, dds_qos_t *q)
{
  dds_entity_t w = dds_create_writer(dpub, topic, q, NULL);
  dds_delete_qos(q);
  if (w < 0) fatal_dds("dds_create_writer", w);
  return w;
}

static dds_entity_t mk_reader(dds_entity_t topic, dds_qos_t *q, dds_listener_t *l)
{
  dds_entity_t r = dds_create_reader(dsub, topic, q, l);
  dds_delete_qos(q);
  if (r < 0) fatal_dds("dds_create_reader", r);
  return r;
}

static void create_participant(void)
{
  dp = dds_create_participant((dds_domainid_t)opt.domain, NULL, NULL);
  if (dp < 0) fatal_dds("dds_create_participant (check -nic and CYCLONEDDS_URI)", dp);
  const dds_topic_descriptor_t *desc =
      opt.keyed ? &perftest_TestDataKeyed_t_desc : &perftest_TestData_t_desc;
  tp_topic = dds_create_topic(dp, desc, "Throughput", NULL, NULL);
  lat_topic = dds_create_topic(dp, desc, "Latency", NULL, NULL);
  ann_topic = dds_create_topic(dp, &perftest_Announcement_t_desc, "Announcement", NULL, NULL);
  if (tp_topic < 0 || lat_topic < 0 || ann_topic < 0) fatal_dds("dds_create_topic", tp_topic);
  dds_qos_t *q = dds_create_qos();
  const char *parts[] = {PARTITION};
  dds_qset_partition(q, 1, parts);
  dpub = dds_create_publisher(dp, q, NULL);
  dsub = dds_create_subscriber(dp, q, NULL);
  dds_delete_qos(q);
  if (dpub < 0 || dsub < 0) fatal_dds("dds_create_publisher/subscriber", dpub < 0 ? dpub : dsub);
}

/* Marks in seen[0..n) the ids ("<tag>=<id>" in USER_DATA) of the endpoints matched by e. */
static int matched_ids(dds_entity_t e, bool e_is_writer, const char *tag, bool *seen, int n)
{
  dds_instance_handle_t hs[1024];
  dds_return_t m = e_is_writer ? dds_get_matched_subscriptions(e, hs, 1024)
                               : dds_get_matched_publications(e, hs, 1024);
  int count = 0;
  memset(seen, 0, sizeof(bool) * (size_t)n);
  if (m < 0) return 0;
  if (m > 1024) m = 1024;
  size_t tl = strlen(tag);
  for (int i = 0; i < m; i++) {
    dds_builtintopic_endpoint_t *ep = e_is_writer ? dds_get_matched_subscription_data(e, hs[i])
                                                  : dds_get_matched_publication_data(e, hs[i]);
    if (ep == NULL) continue;
    void *ud = NULL;
    size_t sz = 0;
    if (ep->qos && dds_qget_userdata(ep->qos, &ud, &sz) && ud && sz > tl + 1 && sz < 32 &&
        memcmp(ud, tag, tl) == 0 && ((char *)ud)[tl] == '=') {
      char buf[32];
      memcpy(buf, ud, sz);
      buf[sz] = '\0';
      int id = atoi(buf + tl + 1);
      if (id >= 0 && id < n && !seen[id]) {
        seen[id] = true;
        count++;
      }
    }
    dds_free(ud);
    dds_builtintopic_free_endpoint(ep);
  }
  return count;
}

/* Number of endpoints currently matched by e (cheap: a status read, no copies). */
static int matched_count(dds_entity_t e, bool e_is_writer)
{
  if (e_is_writer) {
    dds_publication_matched_status_t st;
    return dds_get_publication_matched_status(e, &st) == 0 ? (int)st.current_count : 0;
  }
  dds_subscription_matched_status_t st;
  return dds_get_subscription_matched_status(e, &st) == 0 ? (int)st.current_count : 0;
}

/* "5, 17, 44" (at most 20 ids, then "...") of the ids i in [0,n) with !ok[i]. */
static void list_missing(const bool *ok, int n, char *out, size_t cap)
{
  size_t len = 0;
  int shown = 0;
  out[0] = '\0';
  for (int i = 0; i < n && len + 16 < cap; i++) {
    if (ok[i]) continue;
    if (shown == 20) {
      len += (size_t)snprintf(out + len, cap - len, ", ...");
      break;
    }
    len += (size_t)snprintf(out + len, cap - len, "%s%d", shown ? ", " : "", i);
    shown++;
  }
}

static int count_true(const bool *a, int n)
{
  int c = 0;
  for (int i = 0; i < n; i++) c += a[i];
  return c;
}

/* ---- latency bookkeeping (publisher 0) ---------------------------------------------- */

static struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  unsigned long *v; /* one-way latencies in µs, in arrival order (Perftest's _latency_history) */
  size_t n, cap;
  unsigned long long sum, sumsq;
  unsigned long min, max;
  uint64_t *per_sub;
  uint64_t echoes;   /* every echo, the discarded first one included */
  uint64_t skew;     /* echoes stamped before they were sent (Perftest: clock skew) */
} lat = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

/* -latencyTest: the next ping leaves from the echo listener itself (no thread hand-off on
   the measured path, as ddsperf's ping does); the main thread only starts the test and
   re-sends after a ping timed out. Guarded by lat.m. */
static struct {
  dds_entity_t wr;
  perftest_TestData_t s; /* template; payload shared, read-only */
  uint64_t cur, sent;
  int64_t t_cur, t_end;
  bool active, done;
} lt;

static bool lt_next_locked(perftest_TestData_t *out)
{
  if (g_stop || now_ns() >= lt.t_end || (opt.num_iter > 0 && lt.sent >= (uint64_t)opt.num_iter)) {
    lt.done = true;
    pthread_cond_broadcast(&lat.c);
    return false;
  }
  lt.cur = lt.sent++;
  *out = lt.s;
  out->seq = lt.cur;
  out->ping_to = (int32_t)(lt.cur % (uint64_t)opt.num_subs);
  out->ts = lt.t_cur = now_ns();
  return true;
}

static void lt_write(const perftest_TestData_t *x)
{
  dds_return_t rc = dds_write(lt.wr, x);
  if (rc < 0 && rc != DDS_RETCODE_TIMEOUT)
    fprintf(stderr, "publisher 0: ping write failed: %s\n", dds_strretcode(rc));
}

static void on_echo(dds_entity_t rd, void *arg)
{
  (void)arg;
  void *buf[TAKE_N];
  dds_sample_info_t info[TAKE_N];
  for (;;) {
    buf[0] = NULL;
    int n = dds_take(rd, buf, info, TAKE_N, TAKE_N);
    if (n <= 0) break;
    int64_t t = now_ns();
    for (int i = 0; i < n; i++) {
      const perftest_TestData_t *s = buf[i];
      if (!info[i].valid_data || s->kind != KIND_ECHO) continue;
      /* Perftest: integer microseconds, half the round trip. */
      int64_t now_us = t / 1000, sent_us = s->ts / 1000;
      pthread_mutex_lock(&lat.m);
      bool first = lat.echoes++ == 0, ok = now_us >= sent_us;
      unsigned long us = ok ? (unsigned long)((now_us - sent_us) / 2) : 0;
      if (s->sub_id >= 0 && s->sub_id < opt.num_subs) lat.per_sub[s->sub_id]++;
      if (!ok) lat.skew++;
      /* Perftest discards the first pong (it only opens the table: header, counters reset). */
      bool keep = ok && !first;
      if (keep) {
        if (lat.n == lat.cap) {
          size_t nc = lat.cap ? lat.cap * 2 : 4096;
          unsigned long *nv = realloc(lat.v, nc * sizeof *nv);
          if (nv == NULL) abort();
          lat.v = nv;
          lat.cap = nc;
        }
        lat.v[lat.n++] = us;
        lat.sum += us;
        lat.sumsq += (unsigned long long)us * us;
        if (lat.n == 1 || us < lat.min) lat.min = us;
        if (lat.n == 1 || us > lat.max) lat.max = us;
      }
      perftest_TestData_t next;
      bool send = lt.active && !lt.done && s->seq == lt.cur && lt_next_locked(&next);
      size_t cnt = lat.n;
      pt_latency_interval_t li = {.latency = us, .minimum = lat.min, .maximum = lat.max};
      if (cnt > 0) {
        li.average = (double)lat.sum / (double)cnt;
        double var = (double)lat.sumsq / (double)cnt - li.average * li.average;
        li.std = var > 0 ? sqrt(var) : 0.0;
      }
      if (!lt.active) pthread_cond_broadcast(&lat.c); /* -latencyTest: the main thread polls */
      pthread_mutex_unlock(&lat.m);
      if (send) lt_write(&next);
      if (first) pr_latency_header();
      else if (keep && opt.print_intervals) {
        li.cpu = opt.cpu ? pr_cpu_instant() : 0.0;
        pr_latency_interval(&li);
      }
    }
    dds_return_loan(rd, buf, n);
    if (n < TAKE_N) break;
  }
}

static int cmp_ulong(const void *a, const void *b)
{
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return (x > y) - (x < y);
}

/* Perftest 4.1+ -latencyFile: appended, a "Sample Number, Value" header, "i, v" rows in
   arrival order, a blank line after the block. */
static void write_latency_file(void)
{
  FILE *f = fopen(opt.latency_file, "a");
  if (f == NULL) {
    fprintf(stderr, "publisher 0: cannot write -latencyFile %s: %s\n", opt.latency_file,
            strerror(errno));
    return;
  }
  fprintf(stderr, "Saving latency information in \"%s\".\n", opt.latency_file);
  fprintf(f, "Sample Number, Value\n");
  for (size_t i = 0; i < lat.n; i++) fprintf(f, "%zu, %lu\n", i, lat.v[i]);
  fprintf(f, "\n");
  fclose(f);
}

static void print_latency_summary(void)
{
  pthread_mutex_lock(&lat.m);
  size_t n = lat.n;
  char per[4096];
  size_t len = 0;
  for (int i = 0; i < opt.num_subs && len + 32 < sizeof per; i++)
    len += (size_t)snprintf(per + len, sizeof per - len, "%s%d:%" PRIu64, i ? " " : "", i,
                            lat.per_sub[i]);
  if (lat.skew)
    fprintf(stderr, "The following latency result may not be accurate because clock skew "
                    "happens %" PRIu64 " times\n", lat.skew);
  if (n == 0) {
    pthread_mutex_unlock(&lat.m);
    fprintf(stderr, "publisher 0: no echo (pong) received after the first (Perftest discards "
                    "it): no latency summary; increase the run length or lower -latencyCount\n");
    return;
  }
  if (opt.latency_file) write_latency_file();
  qsort(lat.v, n, sizeof *lat.v, cmp_ulong);
  double ave = (double)lat.sum / (double)n, var = (double)lat.sumsq / (double)n - ave * ave;
  pt_latency_summary_t li = {.length = opt.data_len,
                             .average = ave,
                             .std = var > 0 ? sqrt(var) : 0.0,
                             .minimum = lat.min,
                             .maximum = lat.max,
                             .p50 = lat.v[n * 50 / 100],
                             .p90 = lat.v[n * 90 / 100],
                             .p99 = lat.v[n * 99 / 100],
                             .p9999 = lat.v[(size_t)((double)n * (9999.0 / 10000))],
                             .p999999 = lat.v[(size_t)((double)n * (999999.0 / 1000000))]};
  pthread_mutex_unlock(&lat.m);
  li.cpu = opt.cpu ? pr_cpu_average() : 0.0;
  pr_latency_summary(&li);
  fprintf(stderr, "publisher 0: %zu latency samples (first echo discarded, as Perftest); echoes "
                  "per subscriber: %s\n", n, per);
}

/* ---- publisher ---------------------------------------------------------------------- */

static void poll_announcements(dds_entity_t rd, bool *ready, bool *acked)
{
  void *buf[TAKE_N];
  dds_sample_info_t info[TAKE_N];
  for (;;) {
    buf[0] = NULL;
    int n = dds_take(rd, buf, info, TAKE_N, TAKE_N);
    if (n <= 0) return;
    for (int i = 0; i < n; i++) {
      const perftest_Announcement_t *a = buf[i];
      if (!info[i].valid_data || a->sub_id < 0 || a->sub_id >= opt.num_subs) continue;
      if (a->kind == ANN_READY) ready[a->sub_id] = true;
      else if (a->kind == ANN_FINISHED_ACK && (uint32_t)opt.pid / 8 < a->finished._length &&
               (a->finished._buffer[opt.pid / 8] >> (opt.pid % 8)) & 1)
        acked[a->sub_id] = true;
    }
    dds_return_loan(rd, buf, n);
    if (n < TAKE_N) return;
  }
}

static int run_publisher(void)
{
  int ns = opt.num_subs;
  bool *ready = calloc((size_t)ns, sizeof(bool)), *acked = calloc((size_t)ns, sizeof(bool));
  bool *tp_m = calloc((size_t)ns, sizeof(bool)), *lat_m = calloc((size_t)ns, sizeof(bool));
  bool *ok = calloc((size_t)ns, sizeof(bool));
  lat.per_sub = calloc((size_t)ns, sizeof(uint64_t));
  if (!ready || !acked || !tp_m || !lat_m || !ok || !lat.per_sub) abort();

  dds_qos_t *wq = data_qos(true, "pub", opt.pid);
  /* Latency test: one ping outstanding at a time, so KEEP_LAST 1 loses nothing and the
     writer never throttles (the next ping is written from the echo listener). */
  if (opt.latency_test && !opt.best_effort) dds_qset_history(wq, DDS_HISTORY_KEEP_LAST, 1);
  bool batching = opt.batch_size != 0;
  dds_write_set_batch(batching); /* Cyclone 0.10: global switch (Internal/WriteBatch) */
  dds_entity_t wr = mk_writer(tp_topic, wq);
  dds_entity_t ann = mk_reader(ann_topic, ann_qos("pub", opt.pid), NULL);
  dds_entity_t lrd = 0;
  if (opt.pid == 0) {
    if (opt.latency_file) {
      /* Fail now rather than after the test (the samples are written at the summary). */
      FILE *f = fopen(opt.latency_file, "a");
      if (f) fclose(f);
      else {
        fprintf(stderr, "publisher 0: cannot write -latencyFile %s: %s\n", opt.latency_file,
                strerror(errno));
        return 2;
      }
    }
    dds_listener_t *l = dds_create_listener(NULL);
    dds_lset_data_available(l, on_echo);
    lrd = mk_reader(lat_topic, data_qos(false, "pub", opt.pid), l);
    dds_delete_listener(l);
  }

  /* Discovery: every subscriber announced, and matched on Throughput (and Latency). */
  fprintf(stderr, "publisher %d: waiting for %d subscribers (timeout %g s)\n", opt.pid, ns,
          opt.discovery_timeout);
  int64_t t0 = now_ns(), next_progress = t0 + 5000000000LL;
  bool complete = false;
  while (!g_stop) {
    poll_announcements(ann, ready, acked);
    /* Identify matched readers only once the counts say all are there (keeps the poll
       cheap with many peers), and for the message on timeout. */
    int64_t t = now_ns();
    bool timed_out = t - t0 > (int64_t)(opt.discovery_timeout * 1e9);
    if ((matched_count(wr, true) >= ns && (lrd == 0 || matched_count(lrd, false) >= ns)) ||
        timed_out) {
      matched_ids(wr, true, "sub", tp_m, ns);
      if (lrd) matched_ids(lrd, false, "sub", lat_m, ns);
    }
    for (int i = 0; i < ns; i++) ok[i] = ready[i] && tp_m[i] && (lrd == 0 || lat_m[i]);
    if (count_true(ok, ns) == ns) {
      complete = true;
      break;
    }
    if (timed_out) break;
    if (t >= next_progress) {
      fprintf(stderr, "publisher %d: %.0f s: %d of %d subscribers announced, %d matched\n",
              opt.pid, since_start(), count_true(ready, ns), ns, matched_count(wr, true));
      next_progress += 5000000000LL;
    }
    sleep_ms(ns > 20 ? 200 : 20);
  }
  if (!complete && !g_stop) {
    char miss[512];
    list_missing(ok, ns, miss, sizeof miss);
    fprintf(stderr,
            "publisher %d saw %d of %d subscribers within %g s: missing %s "
            "(announced %d, Throughput matched %d%s)\n",
            opt.pid, count_true(ok, ns), ns, opt.discovery_timeout, miss,
            count_true(ready, ns), count_true(tp_m, ns), lrd ? ", Latency matched" : "");
    if (lrd) fprintf(stderr, "publisher 0: Latency reader matched %d of %d echo writers\n",
                     count_true(lat_m, ns), ns);
    return 1;
  }
  if (complete)
    fprintf(stderr, "publisher %d: discovery complete: %d subscribers after %.2f s (process start)\n",
            opt.pid, ns, since_start());
  pr_begin();
  if (opt.cpu) pr_cpu_start();

  /* Send loop. */
  size_t payload = (size_t)(opt.data_len - PT_OVERHEAD_BYTES);
  perftest_TestData_t s;
  memset(&s, 0, sizeof s);
  s.pub_id = opt.pid;
  s.sub_id = -1;
  s.bin_data._buffer = calloc(payload ? payload : 1, 1);
  s.bin_data._length = s.bin_data._maximum = (uint32_t)payload;
  s.bin_data._release = false;
  long long batched = 0;
  uint64_t seq = 0, pings = 0;
  int64_t t_send = now_ns();
  int64_t t_end = opt.exec_time > 0 ? t_send + (int64_t)(opt.exec_time * 1e9) : INT64_MAX;
  int rc = 0;
  if (opt.latency_test) {
    int64_t ping_timeout = opt.best_effort ? 100000000LL : 1000000000LL;
    perftest_TestData_t x;
    pthread_mutex_lock(&lat.m);
    lt.wr = wr;
    lt.s = s;
    lt.s.kind = KIND_DATA;
    lt.t_end = t_end;
    lt.active = true;
    bool send = lt_next_locked(&x);
    while (!lt.done) {
      if (send) {
        pthread_mutex_unlock(&lat.m);
        lt_write(&x);
        pthread_mutex_lock(&lat.m);
      }
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 10000000;
      if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&lat.c, &lat.m, &ts);
      send = false;
      if (!lt.done && (g_stop || now_ns() - lt.t_cur > ping_timeout || now_ns() >= t_end))
        send = lt_next_locked(&x); /* lost ping or echo: go on (or finish) */
    }
    seq = pings = lt.sent;
    pthread_mutex_unlock(&lat.m);
  }
  /* -pubRate: sample k is due at t_send + k / rate (absolute schedule, so the rate does not
     drift); a publisher more than 100 ms behind restarts its schedule instead of bursting,
     so an overloaded testbed shows as an achieved rate below the requested one. */
  int64_t period_ns = opt.pub_rate > 0 ? (int64_t)(1e9 / (double)opt.pub_rate) : 0;
  int64_t due = t_send;
  while (!g_stop && !opt.latency_test) {
    if (period_ns > 0) {
      int64_t t = now_ns();
      if (t - due > 100000000LL) due = t;
      if (due > t) {
        if (opt.pub_rate_sleep) {
          struct timespec ts = {.tv_sec = (time_t)(due / 1000000000LL),
                                .tv_nsec = (long)(due % 1000000000LL)};
          while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !g_stop) {
          }
        } else {
          while (now_ns() < due && !g_stop) {
          }
        }
      }
      due += period_ns;
      if (now_ns() >= t_end) break;
    } else if ((seq & 63) == 0) {
      if (now_ns() >= t_end) break;
    }
    if (opt.num_iter > 0 && seq >= (uint64_t)opt.num_iter) break;
    s.seq = seq;
    s.kind = KIND_DATA;
    s.key = opt.keyed ? (int32_t)(seq % (uint64_t)opt.instances) : 0;
    bool ping = opt.pid == 0 && (seq % (uint64_t)opt.latency_count) == 0;
    s.ping_to = ping ? (int32_t)(pings % (uint64_t)ns) : -1;
    if (ping) s.ts = now_ns();
    dds_return_t w;
    /* A throttled writer (peers lagging) retries, but not past the end of the test. */
    while ((w = dds_write(wr, &s)) == DDS_RETCODE_TIMEOUT && !g_stop && now_ns() < t_end) {
    }
    if (w == DDS_RETCODE_TIMEOUT) break;
    if (w < 0) {
      fprintf(stderr, "publisher %d: dds_write failed: %s\n", opt.pid, dds_strretcode(w));
      rc = 1;
      break;
    }
    if (batching) {
      batched += opt.data_len;
      if (ping || (opt.batch_size > 0 && batched >= opt.batch_size)) {
        dds_write_flush(wr);
        batched = 0;
      }
    }
    if (ping) pings++;
    seq++;
  }
  if (batching) dds_write_flush(wr);
  double secs = (double)(now_ns() - t_send) / 1e9;
  fprintf(stderr, "publisher %d: sent %" PRIu64 " samples (%" PRIu64 " pings) in %.2f s%s\n",
          opt.pid, seq, pings, secs, g_stop ? " (interrupted)" : "");

  /* FINISHED exchange: repeat until every subscriber acknowledged (bounded). */
  s.kind = KIND_FINISHED;
  s.ping_to = -1;
  s.seq = seq;
  /* Bounded wait, reset by progress (FINISHED accepted by the writer, or a new
     acknowledgement: subscribers still draining other publishers' data acknowledge late):
     finishTimeout after the last progress, at most 3 x finishTimeout in all. Reliable:
     FINISHED is written once it fits in the writer's history (each attempt blocks up to
     1 s while the writer is throttled) and is then delivered like the data; best effort:
     it is repeated every 0.5 s. Until FINISHED is accepted the first wait is twice as
     long: under overload (150 processes on 2 cores) a subscriber that holds every sample
     may acknowledge them only > 10 s later (measured), and giving up then turned one slow
     acknowledgement into 76 failed processes. */
  int64_t fin_step = (int64_t)((g_stop ? 1.0 : opt.finish_timeout) * 1e9);
  int64_t fin_start = now_ns(), fin_cap = fin_start + 3 * fin_step;
  int64_t fin_deadline = fin_start + (opt.best_effort || g_stop ? 1 : 2) * fin_step;
  int64_t next_fin = 0;
  int nacked = 0;
  bool queued = false;
  while (now_ns() < fin_deadline) {
    bool progress = false;
    if ((opt.best_effort || !queued) && now_ns() >= next_fin) {
      dds_return_t w = dds_write(wr, &s);
      if (batching) dds_write_flush(wr);
      if (w == 0 && !queued) progress = queued = true;
      else if (w < 0 && w != DDS_RETCODE_TIMEOUT)
        fprintf(stderr, "publisher %d: FINISHED write failed: %s\n", opt.pid, dds_strretcode(w));
      next_fin = now_ns() + 500000000LL;
    }
    poll_announcements(ann, ready, acked);
    int a = count_true(acked, ns);
    if (a == ns) break;
    if (a > nacked) {
      nacked = a;
      progress = true;
    }
    if (progress) {
      fin_deadline = now_ns() + fin_step;
      if (fin_deadline > fin_cap) fin_deadline = fin_cap;
    }
    sleep_ms(20);
  }
  if (count_true(acked, ns) == ns)
    fprintf(stderr, "publisher %d: FINISHED acknowledged by all %d subscribers after %.2f s\n",
            opt.pid, ns, (double)(now_ns() - fin_start) / 1e9);
  else if (!g_stop) {
    char miss[512];
    list_missing(acked, ns, miss, sizeof miss);
    fprintf(stderr,
            "publisher %d: %d of %d subscribers acknowledged FINISHED (waited %.1f s%s): "
            "missing %s\n",
            opt.pid, count_true(acked, ns), ns, (double)(now_ns() - fin_start) / 1e9,
            queued ? "" : "; the writer's history stayed full, a subscriber is not acknowledging",
            miss);
    rc = 1;
  }
  if (opt.pid == 0) {
    if (lrd) dds_set_listener(lrd, NULL);
    print_latency_summary();
  }
  pr_end();
  free(s.bin_data._buffer);
  free(ready);
  free(acked);
  free(tp_m);
  free(lat_m);
  free(ok);
  return rc;
}

/* ---- subscriber --------------------------------------------------------------------- */

static struct {
  pthread_mutex_t m;
  uint64_t *expected; /* next sequence number per publisher */
  bool *seen;         /* a sample of that publisher arrived: the loss baseline is set */
  atomic_int *finished;
  int nfinished;
  _Atomic uint64_t received, lost, echoes;
  _Atomic int64_t first_ns, last_ns, fin_ns; /* first sample, last sample, last FINISHED */
  dds_entity_t echo_wr;
} sub = {.m = PTHREAD_MUTEX_INITIALIZER};

/* Echoes are written by their own thread: this listener runs on Cyclone's receive thread,
   and a reliable write that waits for acknowledgements there would wait for itself. */
typedef struct echo_item {
  perftest_TestData_t s;
  struct echo_item *next;
} echo_item_t;

static struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  echo_item_t *head, *tail;
  bool stop;
  pthread_t thread;
} eq = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

static void echo_enqueue(const perftest_TestData_t *s)
{
  echo_item_t *it = malloc(sizeof *it);
  if (it == NULL) abort();
  it->s = *s;
  it->s.kind = KIND_ECHO;
  it->s.sub_id = opt.sid;
  it->s.ping_to = -1;
  it->s.bin_data._buffer = malloc(s->bin_data._length ? s->bin_data._length : 1);
  if (it->s.bin_data._buffer == NULL) abort();
  if (s->bin_data._length) memcpy(it->s.bin_data._buffer, s->bin_data._buffer, s->bin_data._length);
  it->s.bin_data._maximum = s->bin_data._length;
  it->s.bin_data._release = false;
  it->next = NULL;
  pthread_mutex_lock(&eq.m);
  if (eq.tail) eq.tail->next = it;
  else eq.head = it;
  eq.tail = it;
  pthread_cond_signal(&eq.c);
  pthread_mutex_unlock(&eq.m);
}

static void *echo_thread(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&eq.m);
  for (;;) {
    while (eq.head == NULL && !eq.stop) pthread_cond_wait(&eq.c, &eq.m);
    echo_item_t *it = eq.head;
    if (it == NULL) break; /* stopped and drained */
    eq.head = it->next;
    if (eq.head == NULL) eq.tail = NULL;
    pthread_mutex_unlock(&eq.m);
    dds_return_t rc;
    while ((rc = dds_write(sub.echo_wr, &it->s)) == DDS_RETCODE_TIMEOUT && !g_stop) sleep_ms(1);
    if (rc == 0) sub.echoes++;
    else fprintf(stderr, "subscriber %d: echo failed: %s\n", opt.sid, dds_strretcode(rc));
    free(it->s.bin_data._buffer);
    free(it);
    pthread_mutex_lock(&eq.m);
  }
  pthread_mutex_unlock(&eq.m);
  return NULL;
}

static void on_data(dds_entity_t rd, void *arg)
{
  (void)arg;
  void *buf[TAKE_N];
  dds_sample_info_t info[TAKE_N];
  for (;;) {
    buf[0] = NULL;
    int n = dds_take(rd, buf, info, TAKE_N, TAKE_N);
    if (n <= 0) break;
    int64_t t = now_ns();
    uint64_t got = 0, lost = 0;
    pthread_mutex_lock(&sub.m);
    for (int i = 0; i < n; i++) {
      const perftest_TestData_t *s = buf[i];
      if (!info[i].valid_data || s->pub_id < 0 || s->pub_id >= opt.num_pubs) continue;
      if (s->kind == KIND_FINISHED) {
        /* FINISHED carries the number of samples sent: a gap at the tail is lost too. */
        uint64_t *e = &sub.expected[s->pub_id];
        if (!atomic_load(&sub.finished[s->pub_id])) {
          if (s->seq > *e) {
            lost += s->seq - *e;
            *e = s->seq;
          }
          /* Perftest's summary time base runs to the last FINISHED. */
          if (++sub.nfinished == opt.num_pubs) sub.fin_ns = t;
        }
        atomic_store(&sub.finished[s->pub_id], 1);
        continue;
      }
      if (s->kind != KIND_DATA) continue;
      got++;
      uint64_t *e = &sub.expected[s->pub_id];
      /* Perftest: the loss baseline is the first sequence number seen of each publisher. */
      if (!sub.seen[s->pub_id]) {
        sub.seen[s->pub_id] = true;
        *e = s->seq;
      }
      if (s->seq > *e) lost += s->seq - *e;
      if (s->seq >= *e) *e = s->seq + 1;
      if (s->ping_to == opt.sid) {
        /* Fast path: write the echo right here (the echo writer never blocks); when its
           window is full, leave it to the echo thread. */
        perftest_TestData_t e = *s;
        e.kind = KIND_ECHO;
        e.sub_id = opt.sid;
        e.ping_to = -1;
        pthread_mutex_lock(&eq.m);
        bool queued = eq.head != NULL; /* keep echoes in order behind queued ones */
        pthread_mutex_unlock(&eq.m);
        if (!queued && dds_write(sub.echo_wr, &e) == 0) sub.echoes++;
        else echo_enqueue(s);
      }
    }
    pthread_mutex_unlock(&sub.m);
    if (got) {
      int64_t zero = 0;
      atomic_compare_exchange_strong(&sub.first_ns, &zero, t);
      sub.last_ns = t;
      sub.received += got;
    }
    if (lost) sub.lost += lost;
    dds_return_loan(rd, buf, n);
    if (n < TAKE_N) break;
  }
}

/* finished: bitmap of the publishers whose FINISHED arrived (NULL for ANN_READY). */
static void announce(dds_entity_t w, int kind, int pub_id, uint8_t *finished, uint32_t len)
{
  perftest_Announcement_t a = {.sub_id = opt.sid, .kind = kind, .pub_id = pub_id};
  a.finished._buffer = finished;
  a.finished._length = a.finished._maximum = finished ? len : 0;
  a.finished._release = false;
  dds_return_t rc = dds_write(w, &a);
  if (rc < 0) fprintf(stderr, "subscriber %d: announcement failed: %s\n", opt.sid, dds_strretcode(rc));
}

static void sub_summary(void)
{
  uint64_t pk = sub.received, lost = sub.lost;
  int64_t end = sub.fin_ns != 0 ? sub.fin_ns : sub.last_ns;
  pt_throughput_summary_t ti = {.length = opt.data_len, .packets = pk, .lost = lost};
  if (sub.first_ns != 0 && end > sub.first_ns)
    ti.time_us = (unsigned long long)((end - sub.first_ns) / 1000);
  ti.bytes = pk * (unsigned long long)opt.data_len;
  ti.lost_percent = pk + lost ? (float)((double)lost * 100.0 / (double)(pk + lost)) : 0.0f;
  ti.cpu = opt.cpu ? pr_cpu_average() : 0.0;
  pr_throughput_summary(&ti);
  pr_end();
  fprintf(stderr, "subscriber %d: received %" PRIu64 " samples, lost %" PRIu64 ", echoed %" PRIu64
                  " pings\n",
          opt.sid, pk, lost, (uint64_t)sub.echoes);
}

static int run_subscriber(void)
{
  int np = opt.num_pubs;
  sub.expected = calloc((size_t)np, sizeof(uint64_t));
  sub.seen = calloc((size_t)np, sizeof(bool));
  sub.finished = calloc((size_t)np, sizeof(atomic_int));
  bool *tp_m = calloc((size_t)np, sizeof(bool)), *ann_m = calloc((size_t)np, sizeof(bool));
  bool *ok = calloc((size_t)np, sizeof(bool)), *was = calloc((size_t)np, sizeof(bool));
  bool *acked = calloc((size_t)np, sizeof(bool)), *gone = calloc((size_t)np, sizeof(bool));
  uint32_t fin_len = (uint32_t)(np + 7) / 8;
  uint8_t *fin_bits = calloc(fin_len, 1);
  bool lat_m[1];
  if (!sub.expected || !sub.seen || !sub.finished || !tp_m || !ann_m || !ok || !was || !acked || !gone ||
      !fin_bits)
    abort();

  dds_qos_t *eqos = data_qos(true, "sub", opt.sid);
  if (!opt.best_effort) dds_qset_reliability(eqos, DDS_RELIABILITY_RELIABLE, 0);
  if (opt.latency_test) dds_qset_history(eqos, DDS_HISTORY_KEEP_LAST, 1);
  sub.echo_wr = mk_writer(lat_topic, eqos);
  dds_entity_t ann = mk_writer(ann_topic, ann_qos("sub", opt.sid));
  dds_listener_t *l = dds_create_listener(NULL);
  dds_lset_data_available(l, on_data);
  if (pthread_create(&eq.thread, NULL, echo_thread, NULL) != 0) abort();
  dds_entity_t rd = mk_reader(tp_topic, data_qos(false, "sub", opt.sid), l);
  dds_delete_listener(l);

  fprintf(stderr, "subscriber %d: waiting for %d publishers (timeout %g s)\n", opt.sid, np,
          opt.discovery_timeout);
  int64_t t0 = now_ns(), next_progress = t0 + 5000000000LL;
  bool complete = false;
  while (!g_stop) {
    int64_t t = now_ns();
    bool timed_out = t - t0 > (int64_t)(opt.discovery_timeout * 1e9);
    if ((matched_count(rd, false) >= np && matched_count(ann, true) >= np &&
         matched_count(sub.echo_wr, true) >= 1) ||
        timed_out) {
      matched_ids(rd, false, "pub", tp_m, np);
      matched_ids(ann, true, "pub", ann_m, np);
      matched_ids(sub.echo_wr, true, "pub", lat_m, 1);
    }
    for (int i = 0; i < np; i++) ok[i] = tp_m[i] && ann_m[i] && (i != 0 || lat_m[0]);
    if (count_true(ok, np) == np) {
      complete = true;
      break;
    }
    if (timed_out) break;
    if (t >= next_progress) {
      fprintf(stderr, "subscriber %d: %.0f s: matched %d of %d publishers\n", opt.sid,
              since_start(), matched_count(rd, false), np);
      next_progress += 5000000000LL;
    }
    sleep_ms(np > 20 ? 200 : 20);
  }
  if (!complete && !g_stop) {
    char miss[512];
    list_missing(ok, np, miss, sizeof miss);
    fprintf(stderr, "subscriber %d saw %d of %d publishers within %g s: missing %s\n",
            opt.sid, count_true(ok, np), np, opt.discovery_timeout, miss);
    return 1;
  }
  if (complete) {
    fprintf(stderr, "subscriber %d: discovery complete: %d publishers after %.2f s (process start)\n",
            opt.sid, np, since_start());
    announce(ann, ANN_READY, -1, NULL, 0);
    pr_begin();
    if (opt.cpu) pr_cpu_start();
  }
  memcpy(was, ok, sizeof(bool) * (size_t)np);

  /* Receive loop. Interval rows as Perftest: a tick every second; the tick that first
     sees data only sets the baseline (the partial second is swallowed), later ticks print
     the samples and bytes per second since the previous tick and their running means. */
  int rc = 0;
  int64_t t_announce = now_ns(), last_data_seen = t_announce;
  int64_t prev_t = t_announce, next_tick = t_announce + 1000000000LL;
  uint64_t prev_pk = 0, last_seen_pk = 0, ave_count = 0;
  double mps_ave = 0, bps_ave = 0;
  bool flowing = false, baseline = false;
  int64_t idle_limit = (int64_t)((opt.discovery_timeout + opt.finish_timeout) * 1e9);
  int tick = 0;
  while (!g_stop && complete) {
    sleep_ms(50);
    int64_t t = now_ns();
    uint64_t pk = sub.received;
    if (pk != last_seen_pk) {
      last_seen_pk = pk;
      last_data_seen = t;
    }
    if (!flowing && sub.first_ns != 0) {
      flowing = true;
      pr_throughput_header();
    }
    if (t >= next_tick) {
      while (next_tick <= t) next_tick += 1000000000LL;
      if (opt.print_intervals) {
        if (flowing && !baseline) {
          /* first tick that sees data: swallow the partial second */
          baseline = true;
          prev_pk = pk;
          prev_t = t;
          mps_ave = bps_ave = 0;
          ave_count = 0;
        } else {
          uint64_t msgs = pk - prev_pk;
          unsigned long long delta_us = (unsigned long long)((t - prev_t) / 1000);
          if (delta_us == 0) delta_us = 1;
          unsigned long long mps = msgs * 1000000ULL / delta_us;
          unsigned long long bps = msgs * (unsigned long long)opt.data_len * 1000000ULL / delta_us;
          ave_count++;
          bps_ave += ((double)bps - bps_ave) / (double)ave_count;
          mps_ave += ((double)mps - mps_ave) / (double)ave_count;
          uint64_t lost = sub.lost;
          if (pk > 0) {
            pt_throughput_interval_t ti = {
                .packets = pk, .packets_per_s = mps, .bytes_per_s = bps, .lost = lost,
                .packets_ave = mps_ave, .bytes_ave = bps_ave,
                .lost_percent = (float)((double)lost * 100.0 / (double)(pk + lost)),
                .cpu = opt.cpu ? pr_cpu_instant() : 0.0};
            pr_throughput_interval(&ti);
          }
          prev_pk = pk;
          prev_t = t;
        }
      }
    }
    /* FINISHED acknowledgements and vanished publishers (every ~0.25 s). */
    if (++tick % 5 != 0) continue;
    int done = 0, newest = -1;
    if (matched_count(rd, false) < np) matched_ids(rd, false, "pub", tp_m, np);
    else memcpy(tp_m, was, sizeof(bool) * (size_t)np);
    for (int i = 0; i < np; i++) {
      if (atomic_load(&sub.finished[i])) {
        if (!acked[i]) {
          fin_bits[i / 8] |= (uint8_t)(1u << (i % 8));
          acked[i] = true;
          newest = i;
        }
        done++;
      } else if (was[i] && !tp_m[i]) {
        gone[i] = true;
        done++;
      }
    }
    if (newest >= 0) announce(ann, ANN_FINISHED_ACK, newest, fin_bits, fin_len);
    if (done == np) break;
    if (t - last_data_seen > idle_limit) {
      char miss[512];
      for (int i = 0; i < np; i++) ok[i] = atomic_load(&sub.finished[i]) != 0;
      list_missing(ok, np, miss, sizeof miss);
      fprintf(stderr, "subscriber %d: no data for %.0f s; publishers not finished: %s\n",
              opt.sid, (double)(t - last_data_seen) / 1e9, miss);
      rc = 1;
      break;
    }
  }
  if (count_true(gone, np) > 0) {
    char miss[512];
    size_t len = 0;
    miss[0] = '\0';
    pthread_mutex_lock(&sub.m);
    for (int i = 0; i < np && len + 40 < sizeof miss; i++)
      if (gone[i])
        len += (size_t)snprintf(miss + len, sizeof miss - len, "%s%d (%" PRIu64 " samples seen)",
                                len ? ", " : "", i, sub.expected[i]);
    pthread_mutex_unlock(&sub.m);
    fprintf(stderr, "subscriber %d: publishers vanished before FINISHED: %s\n", opt.sid,
            miss);
    rc = 1;
  }
  dds_set_listener(rd, NULL);
  pthread_mutex_lock(&eq.m);
  eq.stop = true;
  pthread_cond_signal(&eq.c);
  pthread_mutex_unlock(&eq.m);
  pthread_join(eq.thread, NULL);
  sub_summary();
  fprintf(stderr, "subscriber %d: receive loop ended at %.2f s\n", opt.sid, since_start());
  dds_wait_for_acks(ann, DDS_SECS(1));
  free(tp_m);
  free(ann_m);
  free(ok);
  free(was);
  free(acked);
  free(gone);
  free(fin_bits);
  return g_stop ? 0 : rc;
}

int main(int argc, char **argv)
{
  t_start = now_ns();
  /* A fixed mmap threshold keeps Cyclone's receive buffers (1 MiB each) in their own
     mappings, returned to the kernel when freed. glibc's default raises the threshold
     past 1 MiB after the first such buffer is freed; later buffers then come from the
     malloc arenas, where a few buffers still held by samples waiting for a repair keep
     the arenas from shrinking, and RSS ratchets up for as long as sockets overflow
     (75x75 multicast, 25% socket drops: +13% per subscriber over 300 s; with the fixed
     threshold +2%; README, "soak" row). Setting it also turns the dynamic
     adjustment off (mallopt(3)). */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  pt_parse_options(argc, argv, &opt);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  if (opt.pub)
    fprintf(stderr,
            "perftest_cyclone (Cyclone DDS %s): publisher %d, %d subscribers, dataLen %d, %s, "
            "latencyCount %lld, numIter %lld, %s%s, domain %d\n",
            DDS_VERSION, opt.pid, opt.num_subs, opt.data_len,
            opt.best_effort ? "best effort" : "strict reliable", opt.latency_count, opt.num_iter,
            opt.latency_test ? "latency test" : "throughput test", opt.keyed ? ", keyed" : "",
            opt.domain);
  else
    fprintf(stderr,
            "perftest_cyclone (Cyclone DDS %s): subscriber %d, %d publishers, dataLen %d, %s%s, "
            "domain %d\n",
            DDS_VERSION, opt.sid, opt.num_pubs, opt.data_len,
            opt.best_effort ? "best effort" : "strict reliable", opt.keyed ? ", keyed" : "",
            opt.domain);
  fprintf(stderr, "config: scale settings for %d participants (%s)%s\n", opt.est_participants,
          opt.total_participants_set ? "-totalParticipants"
          : opt.both_counts ? "-numPublishers + -numSubscribers"
          : opt.pub ? "2 x -numSubscribers: Perftest gives a publisher only that count"
                    : "2 x -numPublishers: Perftest gives a subscriber only that count",
          pt_large_test(&opt) ? "; large test" : "");
  if (opt.pub && !opt.latency_test && opt.exec_time > 0 && !opt.num_iter_set)
    fprintf(stderr, "config: the test ends after -executionTime %g s or -numIter %lld samples "
                    "(Perftest's default), whichever comes first\n",
            opt.exec_time, opt.num_iter);
  if (opt.output_file) {
    fflush(stdout);
    if (freopen(opt.output_file, "a", stdout) == NULL) {
      fprintf(stderr, "[PerftestPrinter] Error: Cannot open output file %s.\n", opt.output_file);
      return 2;
    }
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  }
  if (opt.batch_size < 0)
    fprintf(stderr, "config: write batching on (datagrams filled up to Cyclone's MaxMessageSize; "
                    "pings flushed at once)\n");
  else if (opt.batch_size > 0)
    fprintf(stderr, "config: write batching on, flushed every -batchSize %d bytes and at each ping\n",
            opt.batch_size);
  else
    fprintf(stderr, "config: write batching off (-batchSize 0)\n");
  if (opt.multicast)
    fprintf(stderr, "config: multicast groups: Throughput %s, Latency %s, Announcement %s, TTL 32\n",
            opt.mcast_addr[0], opt.mcast_addr[1], opt.mcast_addr[2]);
  pt_apply_config(&opt);
  pr_init(opt.format, opt.print_intervals, opt.print_headers, opt.cpu, opt.data_len);
  create_participant();
  int rc = opt.pub ? run_publisher() : run_subscriber();
  fflush(stdout);
  if (pt_large_test(&opt)) {
    /* Large test: the results are printed and the FINISHED exchange is over, so leave
       without Cyclone's orderly teardown. With 150 processes on 2 cores dds_delete took
       2.5-5 s per process (measured: writer linger, disposes to every peer, thread joins,
       all waiting for a CPU), only to tell peers that are leaving too; they drop this
       participant by its lease. Small tests delete the participant as usual. */
    fprintf(stderr, "%s %d: exit %d after %.2f s (large test: DDS teardown skipped)\n", role(),
            my_id(), rc, since_start());
    fflush(stderr);
    _exit(rc);
  }
  dds_delete(dp);
  fprintf(stderr, "%s %d: exit %d after %.2f s\n", role(), my_id(), rc, since_start());
  return rc;
}
