/* The agents' protocol logic that does not touch DDS (measure.h). */
#include "measure.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "printer.h"

volatile sig_atomic_t ms_stop;

static const pt_options_t *o;
static int64_t t_start;

/* ---- process ------------------------------------------------------------------------ */

int64_t ms_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double ms_since_start(void) { return (double)(ms_now_ns() - t_start) / 1e9; }

void ms_init(const pt_options_t *opt)
{
  t_start = ms_now_ns();
  o = opt;
  /* A fixed mmap threshold keeps large receive buffers (Cyclone's: 1 MiB each) in their own
     mappings, returned to the kernel when freed. glibc's default raises the threshold
     past 1 MiB after the first such buffer is freed; later buffers then come from the
     malloc arenas, where a few buffers still held by samples waiting for a repair keep
     the arenas from shrinking, and RSS ratchets up for as long as sockets overflow
     (75x75 multicast, 25% socket drops: +13% per subscriber over 300 s; with the fixed
     threshold +2%; README, "soak" row). Setting it also turns the dynamic
     adjustment off (mallopt(3)). */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
}

static void on_signal(int sig)
{
  (void)sig;
  ms_stop = 1;
}

void ms_install_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}

void ms_sleep_ms(int ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !ms_stop) {
  }
}

const char *ms_role(void) { return o->pub ? "publisher" : "subscriber"; }
int ms_id(void) { return o->pub ? o->pid : o->sid; }

int ms_count_true(const bool *a, int n)
{
  int c = 0;
  for (int i = 0; i < n; i++) c += a[i];
  return c;
}

void ms_list_missing(const bool *ok, int n, char *out, size_t cap)
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

void ms_print_startup(const char *prog, const char *middleware, const char *version,
                      const char *scale_note)
{
  if (o->pub)
    fprintf(stderr,
            "%s (%s %s): publisher %d, %d subscribers, dataLen %d, %s, "
            "latencyCount %lld, numIter %lld, %s%s, domain %d\n",
            prog, middleware, version, o->pid, o->num_subs, o->data_len,
            o->best_effort ? "best effort" : "strict reliable", o->latency_count, o->num_iter,
            o->latency_test ? "latency test" : "throughput test", o->keyed ? ", keyed" : "",
            o->domain);
  else
    fprintf(stderr, "%s (%s %s): subscriber %d, %d publishers, dataLen %d, %s%s, domain %d\n",
            prog, middleware, version, o->sid, o->num_pubs, o->data_len,
            o->best_effort ? "best effort" : "strict reliable", o->keyed ? ", keyed" : "",
            o->domain);
  fprintf(stderr, "config: %d participants (%s)", o->est_participants,
          o->total_participants_set ? "-totalParticipants"
          : o->both_counts          ? "-numPublishers + -numSubscribers"
          : o->pub ? "2 x -numSubscribers: Perftest gives a publisher only that count"
                   : "2 x -numPublishers: Perftest gives a subscriber only that count");
  if (pt_large_test(o))
    fprintf(stderr, "; a large test (more than %d): no DDS teardown at exit; scale settings %s",
            PT_LARGE_TEST, scale_note ? scale_note : "off (Perftest's protocol settings; -scaleSettings: README)");
  else if (o->scale_settings)
    fprintf(stderr, "; -scaleSettings has no effect up to %d participants", PT_LARGE_TEST);
  fputc('\n', stderr);
  if (o->pub && !o->latency_test && o->exec_time > 0 && !o->num_iter_set)
    fprintf(stderr, "config: the test ends after -executionTime %g s or -numIter %lld samples "
                    "(Perftest's default), whichever comes first\n",
            o->exec_time, o->num_iter);
}

int ms_open_output_file(void)
{
  if (o->output_file == NULL) return 0;
  fflush(stdout);
  if (freopen(o->output_file, "a", stdout) == NULL) {
    fprintf(stderr, "[PerftestPrinter] Error: Cannot open output file %s.\n", o->output_file);
    return 2;
  }
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  return 0;
}

void ms_print_multicast(void)
{
  if (o->multicast)
    fprintf(stderr, "config: multicast groups: Throughput %s, Latency %s, Announcement %s, TTL 32\n",
            o->mcast_addr[0], o->mcast_addr[1], o->mcast_addr[2]);
}

/* Prints the exit line with why the DDS teardown is skipped, and leaves (stdout is
   already flushed). */
static void exit_without_teardown(int rc, const char *why)
{
  fprintf(stderr, "%s %d: exit %d after %.2f s (%s: DDS teardown skipped)\n", ms_role(), ms_id(),
          rc, ms_since_start(), why);
  fflush(stderr);
  _exit(rc);
}

void ms_exit_if_no_teardown(int rc)
{
  fflush(stdout); /* the results are out before a teardown that can take seconds */
  /* Large test: the results are printed and the FINISHED exchange is over, so leave
     without the middleware's orderly teardown. With 150 processes on 2 cores Cyclone's
     dds_delete took 2.5-5 s per process (measured: writer linger, disposes to every peer,
     thread joins, all waiting for a CPU), only to tell peers that are leaving too; they
     drop this participant by its lease. Small tests delete the participant as usual. */
  if (pt_large_test(o)) exit_without_teardown(rc, "large test");
  /* Stopped by SIGTERM or SIGINT: the summary so far is printed. The orderly teardown can
     wait on peers that are still sending (a native subscriber stopped while an unpaced
     publisher kept writing to it: dds_delete had not returned 10 s later in 3 of 12
     tries), and a signal means "stop now": leave as a large test does. */
  if (ms_stop) exit_without_teardown(rc, "stopped by a signal");
}

void ms_print_exit(int rc)
{
  fprintf(stderr, "%s %d: exit %d after %.2f s\n", ms_role(), ms_id(), rc, ms_since_start());
}

/* ---- TestData_t's fields -------------------------------------------------------------- */

uint64_t ms_seq_unwrap(uint64_t ref, uint32_t wire)
{
  int64_t d = (int32_t)(wire - (uint32_t)ref); /* -2^31 <= d < 2^31 */
  if (d < 0 && (uint64_t)(-d) > ref) return wire;
  return ref + (uint64_t)d; /* modulo 2^64: ref - |d| when d < 0 */
}

void ms_ts_to_wire(int64_t ns, int32_t *hi, uint32_t *lo)
{
  uint64_t us = (uint64_t)(ns / 1000);
  *hi = (int32_t)(uint32_t)(us >> 32);
  *lo = (uint32_t)us;
}

int64_t ms_ts_from_wire(int32_t hi, uint32_t lo)
{
  return (int64_t)(((uint64_t)(uint32_t)hi << 32) | lo) * 1000;
}

void ms_key_to_wire(int32_t key, uint8_t out[4])
{
  for (int c = 0; c < 4; c++) out[c] = (uint8_t)((uint32_t)key >> (c * 8));
}

/* ---- effective QoS ------------------------------------------------------------------ */

void ms_qos_heading(const char *middleware, const char *readme)
{
  fprintf(stderr, "config: effective QoS of the %s, in the terms of Perftest's ThroughputQos (%s on "
                  "%s; every difference from Perftest: %s, \"Perftest's ThroughputQos\"):\n",
          o->pub ? "Throughput writer" : "Throughput reader", o->pub ? "publisher" : "subscriber",
          middleware, readme);
}

void ms_qos(const char *key, const char *value, const char *how_fmt, ...)
{
  char how[512];
  va_list ap;
  va_start(ap, how_fmt);
  vsnprintf(how, sizeof how, how_fmt, ap);
  va_end(ap);
  fprintf(stderr, "qos: %s = %s%s%s%s\n", key, value, how[0] ? " (" : "", how, how[0] ? ")" : "");
}

int ms_udp_sockets(int *fds, int cap)
{
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int fd = atoi(e->d_name), v = 0;
    socklen_t len = sizeof v;
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d)) continue;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) != 0 || v != SOCK_DGRAM) continue;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 || ss.ss_family != AF_INET) continue;
    if (n < cap) fds[n] = fd;
    n++;
  }
  closedir(d);
  return n;
}

void ms_socket_buffers(ms_sockbufs_t *out)
{
  memset(out, 0, sizeof *out);
  int fds[MS_MAX_UDP_SOCKETS];
  int n = ms_udp_sockets(fds, MS_MAX_UDP_SOCKETS);
  out->sockets = n;
  for (int i = 0; i < n && i < MS_MAX_UDP_SOCKETS; i++) {
    int v = 0;
    socklen_t len = sizeof v;
    if (getsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 && v > out->rcvbuf_max) out->rcvbuf_max = v;
    len = sizeof v;
    if (getsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &v, &len) == 0 && v > out->sndbuf_max) out->sndbuf_max = v;
  }
}

void ms_qos_socket_buffers(const char *recv_how, const char *send_how)
{
  ms_sockbufs_t sb;
  ms_socket_buffers(&sb);
  char v[32];
  snprintf(v, sizeof v, "%lld B", sb.rcvbuf_max / 2);
  ms_qos("transport.recv_socket_buffer_size", v,
         "%s; the largest SO_RCVBUF of its %d UDP sockets is %lld B: Linux reports twice the size set",
         recv_how, sb.sockets, sb.rcvbuf_max);
  snprintf(v, sizeof v, "%lld B", sb.sndbuf_max / 2);
  ms_qos("transport.send_socket_buffer_size", v, "%s; the largest SO_SNDBUF is %lld B", send_how,
         sb.sndbuf_max);
}

/* ---- discovery ---------------------------------------------------------------------- */

bool ms_wait_discovery(int n, bool *ok, ms_discovery_fill_fn fill, ms_progress_fn progress,
                       void *ctx)
{
  fprintf(stderr, "%s %d: waiting for %d %s (timeout %g s)\n", ms_role(), ms_id(), n,
          o->pub ? "subscribers" : "publishers", o->discovery_timeout);
  int64_t t0 = ms_now_ns(), next_progress = t0 + 5000000000LL;
  while (!ms_stop) {
    int64_t t = ms_now_ns();
    bool timed_out = t - t0 > (int64_t)(o->discovery_timeout * 1e9);
    fill(ok, timed_out, ctx);
    if (ms_count_true(ok, n) == n) return true;
    if (timed_out) break;
    if (t >= next_progress) {
      progress(ctx);
      next_progress += 5000000000LL;
    }
    ms_sleep_ms(n > 20 ? 200 : 20);
  }
  return false;
}

void ms_begin_tables(void)
{
  pr_begin();
  if (o->cpu) pr_cpu_start();
}

/* ---- publisher ---------------------------------------------------------------------- */

bool ms_pub_discovered(bool complete, const bool *ok, const bool *ready, const bool *tp_m,
                       const bool *lat_m)
{
  int ns = o->num_subs;
  if (!complete && !ms_stop) {
    char miss[512];
    ms_list_missing(ok, ns, miss, sizeof miss);
    fprintf(stderr,
            "publisher %d saw %d of %d subscribers within %g s: missing %s "
            "(announced %d, Throughput matched %d%s)\n",
            o->pid, ms_count_true(ok, ns), ns, o->discovery_timeout, miss,
            ms_count_true(ready, ns), ms_count_true(tp_m, ns), lat_m ? ", Latency matched" : "");
    if (lat_m)
      fprintf(stderr, "publisher 0: Latency reader matched %d of %d echo writers\n",
              ms_count_true(lat_m, ns), ns);
    return false;
  }
  if (complete)
    fprintf(stderr, "publisher %d: discovery complete: %d subscribers after %.2f s (process start)\n",
            o->pid, ns, ms_since_start());
  ms_begin_tables();
  return true;
}

void ms_pace_init(ms_pace_t *p)
{
  p->t_send = p->due = ms_now_ns();
  p->t_end = o->exec_time > 0 ? p->t_send + (int64_t)(o->exec_time * 1e9) : INT64_MAX;
  p->period_ns = o->pub_rate > 0 ? (int64_t)(1e9 / (double)o->pub_rate) : 0;
}

bool ms_pace_next(ms_pace_t *p, uint64_t seq)
{
  if (p->period_ns > 0) {
    int64_t t = ms_now_ns();
    if (t - p->due > 100000000LL) p->due = t;
    if (p->due > t) {
      if (o->pub_rate_sleep) {
        struct timespec ts = {.tv_sec = (time_t)(p->due / 1000000000LL),
                              .tv_nsec = (long)(p->due % 1000000000LL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !ms_stop) {
        }
      } else {
        while (ms_now_ns() < p->due && !ms_stop) {
        }
      }
    }
    p->due += p->period_ns;
    if (ms_now_ns() >= p->t_end) return false;
  } else if ((seq & 63) == 0) {
    if (ms_now_ns() >= p->t_end) return false;
  }
  return !(o->num_iter > 0 && seq >= (uint64_t)o->num_iter);
}

ms_sample_t ms_sample_plan(uint64_t seq, uint64_t pings)
{
  /* The multiple of latencyCount last computed: a sequence number after it and before the
     next one is no ping, without a 64-bit division for every sample (the publisher's loop). */
  static uint64_t ping_base = UINT64_MAX, ping_count;
  const uint64_t lc = (uint64_t)o->latency_count;
  ms_sample_t s;
  s.key = o->keyed ? (int32_t)(seq % (uint64_t)o->instances) : 0;
  if (o->pid != 0) s.ping = false;
  else if (lc == ping_count && seq > ping_base && seq - ping_base < lc) s.ping = false;
  else {
    ping_count = lc;
    ping_base = seq - seq % lc;
    s.ping = ping_base == seq;
  }
  s.ping_to = s.ping ? (int32_t)(pings % (uint64_t)o->num_subs) : -1;
  return s;
}

void ms_print_sent(uint64_t seq, uint64_t pings, const ms_pace_t *p)
{
  double secs = (double)(ms_now_ns() - p->t_send) / 1e9;
  fprintf(stderr, "publisher %d: sent %" PRIu64 " samples (%" PRIu64 " pings) in %.2f s%s\n",
          o->pid, seq, pings, secs, ms_stop ? " (interrupted)" : "");
}

int ms_pub_finish(const bool *acked, ms_write_fn write_finished, ms_poll_fn poll, void *ctx)
{
  int ns = o->num_subs;
  /* Bounded wait, reset by progress (FINISHED accepted by the writer, or a new
     acknowledgement: subscribers still draining other publishers' data acknowledge late):
     finishTimeout after the last progress, at most 3 x finishTimeout in all. Reliable:
     FINISHED is written once it fits in the writer's history (each attempt blocks up to
     1 s while the writer is throttled) and is then delivered like the data; best effort:
     it is repeated every 0.5 s. Until FINISHED is accepted the first wait is twice as
     long: under overload (150 processes on 2 cores) a subscriber that holds every sample
     may acknowledge them only > 10 s later (measured), and giving up then turned one slow
     acknowledgement into 76 failed processes. */
  int64_t fin_step = (int64_t)((ms_stop ? 1.0 : o->finish_timeout) * 1e9);
  int64_t fin_start = ms_now_ns(), fin_cap = fin_start + 3 * fin_step;
  int64_t fin_deadline = fin_start + (o->best_effort || ms_stop ? 1 : 2) * fin_step;
  int64_t next_fin = 0;
  int nacked = 0;
  bool queued = false;
  while (ms_now_ns() < fin_deadline) {
    bool progress = false;
    if ((o->best_effort || !queued) && ms_now_ns() >= next_fin) {
      if (write_finished(ctx) == 1 && !queued) progress = queued = true;
      next_fin = ms_now_ns() + 500000000LL;
    }
    poll(ctx);
    int a = ms_count_true(acked, ns);
    if (a == ns) break;
    if (a > nacked) {
      nacked = a;
      progress = true;
    }
    if (progress) {
      fin_deadline = ms_now_ns() + fin_step;
      if (fin_deadline > fin_cap) fin_deadline = fin_cap;
    }
    ms_sleep_ms(20);
  }
  if (ms_count_true(acked, ns) == ns) {
    fprintf(stderr, "publisher %d: FINISHED acknowledged by all %d subscribers after %.2f s\n",
            o->pid, ns, (double)(ms_now_ns() - fin_start) / 1e9);
  } else if (!ms_stop) {
    char miss[512];
    ms_list_missing(acked, ns, miss, sizeof miss);
    fprintf(stderr,
            "publisher %d: %d of %d subscribers acknowledged FINISHED (waited %.1f s%s): "
            "missing %s\n",
            o->pid, ms_count_true(acked, ns), ns, (double)(ms_now_ns() - fin_start) / 1e9,
            queued ? "" : "; the writer's history stayed full, a subscriber is not acknowledging",
            miss);
    return 1;
  }
  return 0;
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
  uint64_t echoes; /* every echo, the discarded first one included */
  uint64_t skew;   /* echoes stamped before they were sent (Perftest: clock skew) */
} lat = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

/* -latencyTest: the next ping leaves from the echo listener itself (no thread hand-off on
   the measured path, as ddsperf's ping does); the main thread only starts the test and
   re-sends after a ping timed out. Guarded by lat.m. */
static struct {
  ms_ping_fn send;
  void *ctx;
  uint64_t cur, sent;
  int64_t t_cur, t_end;
  bool active, done;
} lt;

void ms_latency_init(void)
{
  lat.per_sub = calloc((size_t)o->num_subs, sizeof(uint64_t));
  if (lat.per_sub == NULL) abort();
}

static bool lt_next_locked(ms_ping_t *out)
{
  if (ms_stop || ms_now_ns() >= lt.t_end || (o->num_iter > 0 && lt.sent >= (uint64_t)o->num_iter)) {
    lt.done = true;
    pthread_cond_broadcast(&lat.c);
    return false;
  }
  lt.cur = lt.sent++;
  out->seq = lt.cur;
  out->ping_to = (int32_t)(lt.cur % (uint64_t)o->num_subs);
  out->ts = lt.t_cur = ms_now_ns();
  return true;
}

void ms_latency_echo(int64_t t_ns, int64_t sent_ts, int32_t sub_id, uint32_t seq_num)
{
  /* Perftest: integer microseconds, half the round trip. */
  int64_t now_us = t_ns / 1000, sent_us = sent_ts / 1000;
  pthread_mutex_lock(&lat.m);
  bool first = lat.echoes++ == 0, ok = now_us >= sent_us;
  unsigned long us = ok ? (unsigned long)((now_us - sent_us) / 2) : 0;
  if (sub_id >= 0 && sub_id < o->num_subs) lat.per_sub[sub_id]++;
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
  ms_ping_t next;
  bool send = lt.active && !lt.done && seq_num == (uint32_t)lt.cur && lt_next_locked(&next);
  size_t cnt = lat.n;
  pt_latency_interval_t li = {.latency = us, .minimum = lat.min, .maximum = lat.max};
  if (cnt > 0) {
    li.average = (double)lat.sum / (double)cnt;
    double var = (double)lat.sumsq / (double)cnt - li.average * li.average;
    li.std = var > 0 ? sqrt(var) : 0.0;
  }
  if (!lt.active) pthread_cond_broadcast(&lat.c); /* -latencyTest: the main thread polls */
  pthread_mutex_unlock(&lat.m);
  if (send) lt.send(&next, lt.ctx);
  if (first) pr_latency_header();
  else if (keep && o->print_intervals) {
    li.cpu = o->cpu ? pr_cpu_instant() : 0.0;
    pr_latency_interval(&li);
  }
}

uint64_t ms_latency_test(int64_t t_end, ms_ping_fn send_ping, void *ctx)
{
  int64_t ping_timeout = o->best_effort ? 100000000LL : 1000000000LL;
  ms_ping_t x;
  pthread_mutex_lock(&lat.m);
  lt.send = send_ping;
  lt.ctx = ctx;
  lt.t_end = t_end;
  lt.active = true;
  bool send = lt_next_locked(&x);
  while (!lt.done) {
    if (send) {
      pthread_mutex_unlock(&lat.m);
      send_ping(&x, ctx);
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
    if (!lt.done && (ms_stop || ms_now_ns() - lt.t_cur > ping_timeout || ms_now_ns() >= t_end))
      send = lt_next_locked(&x); /* lost ping or echo: go on (or finish) */
  }
  uint64_t sent = lt.sent;
  pthread_mutex_unlock(&lat.m);
  return sent;
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
  FILE *f = fopen(o->latency_file, "a");
  if (f == NULL) {
    fprintf(stderr, "publisher 0: cannot write -latencyFile %s: %s\n", o->latency_file,
            strerror(errno));
    return;
  }
  fprintf(stderr, "Saving latency information in \"%s\".\n", o->latency_file);
  fprintf(f, "Sample Number, Value\n");
  for (size_t i = 0; i < lat.n; i++) fprintf(f, "%zu, %lu\n", i, lat.v[i]);
  fprintf(f, "\n");
  fclose(f);
}

void ms_latency_summary(void)
{
  pthread_mutex_lock(&lat.m);
  size_t n = lat.n;
  char per[4096];
  size_t len = 0;
  per[0] = '\0';
  for (int i = 0; i < o->num_subs && len + 32 < sizeof per; i++)
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
  if (o->latency_file) write_latency_file();
  qsort(lat.v, n, sizeof *lat.v, cmp_ulong);
  double ave = (double)lat.sum / (double)n, var = (double)lat.sumsq / (double)n - ave * ave;
  pt_latency_summary_t li = {.length = o->data_len,
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
  li.cpu = o->cpu ? pr_cpu_average() : 0.0;
  pr_latency_summary(&li);
  fprintf(stderr, "publisher 0: %zu latency samples (first echo discarded, as Perftest); echoes "
                  "per subscriber: %s\n", n, per);
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
} sub = {.m = PTHREAD_MUTEX_INITIALIZER};

void ms_sub_init(void)
{
  size_t np = (size_t)o->num_pubs;
  sub.expected = calloc(np, sizeof(uint64_t));
  sub.seen = calloc(np, sizeof(bool));
  sub.finished = calloc(np, sizeof(atomic_int));
  if (!sub.expected || !sub.seen || !sub.finished) abort();
}

void ms_sub_begin(ms_batch_t *b, int64_t t)
{
  b->t = t;
  b->got = b->lost = 0;
  pthread_mutex_lock(&sub.m);
}

bool ms_sub_sample(ms_batch_t *b, int32_t pub_id, int32_t latency_ping, uint32_t seq_num)
{
  if (pub_id < 0 || pub_id >= o->num_pubs) return false;
  uint64_t *e = &sub.expected[pub_id];
  if (latency_ping == MS_PING_FINISHED) {
    uint64_t seq = ms_seq_unwrap(*e, seq_num);
    /* FINISHED carries the number of samples sent: a gap at the tail is lost too. */
    if (!atomic_load(&sub.finished[pub_id])) {
      if (seq > *e) {
        b->lost += seq - *e;
        *e = seq;
      }
      /* Perftest's summary time base runs to the last FINISHED. */
      if (++sub.nfinished == o->num_pubs) sub.fin_ns = b->t;
    }
    atomic_store(&sub.finished[pub_id], 1);
    return false;
  }
  if (latency_ping < MS_PING_NONE) return false;
  b->got++;
  /* Perftest: the loss baseline is the first sequence number seen of each publisher. */
  if (!sub.seen[pub_id]) {
    sub.seen[pub_id] = true;
    *e = seq_num;
  }
  uint64_t seq = ms_seq_unwrap(*e, seq_num);
  if (seq > *e) b->lost += seq - *e;
  if (seq >= *e) *e = seq + 1;
  return true;
}

void ms_sub_end(ms_batch_t *b)
{
  /* Written only here, under sub.m, and read lock-free by the reporting loop: plain loads
     and release stores suffice (no locked read-modify-write per listener call). */
  if (b->got) {
    if (atomic_load_explicit(&sub.first_ns, memory_order_relaxed) == 0)
      atomic_store_explicit(&sub.first_ns, b->t, memory_order_release);
    atomic_store_explicit(&sub.last_ns, b->t, memory_order_release);
    atomic_store_explicit(&sub.received,
                          atomic_load_explicit(&sub.received, memory_order_relaxed) + b->got,
                          memory_order_release);
  }
  if (b->lost)
    atomic_store_explicit(&sub.lost, atomic_load_explicit(&sub.lost, memory_order_relaxed) + b->lost,
                          memory_order_release);
  /* Last: ms_sub_begin then waits for a running listener call to count its samples. */
  pthread_mutex_unlock(&sub.m);
}

void ms_sub_echoed(void) { sub.echoes++; }

bool ms_sub_discovered(bool complete, const bool *ok)
{
  int np = o->num_pubs;
  if (!complete && !ms_stop) {
    char miss[512];
    ms_list_missing(ok, np, miss, sizeof miss);
    fprintf(stderr, "subscriber %d saw %d of %d publishers within %g s: missing %s\n", o->sid,
            ms_count_true(ok, np), np, o->discovery_timeout, miss);
    return false;
  }
  if (complete)
    fprintf(stderr, "subscriber %d: discovery complete: %d publishers after %.2f s (process start)\n",
            o->sid, np, ms_since_start());
  return true;
}

int ms_sub_receive(bool complete, const bool *was, ms_matched_fn matched, ms_ack_fn ack, void *ctx)
{
  int np = o->num_pubs;
  bool *tp_m = calloc((size_t)np, sizeof(bool)), *ok = calloc((size_t)np, sizeof(bool));
  bool *acked = calloc((size_t)np, sizeof(bool)), *gone = calloc((size_t)np, sizeof(bool));
  uint32_t fin_len = (uint32_t)(np + 7) / 8;
  uint8_t *fin_bits = calloc(fin_len, 1);
  if (!tp_m || !ok || !acked || !gone || !fin_bits) abort();

  /* Interval rows as Perftest: a tick every second; the tick that first sees data only
     sets the baseline (the partial second is swallowed), later ticks print the samples and
     bytes per second since the previous tick and their running means. */
  int rc = 0;
  int64_t t_announce = ms_now_ns(), last_data_seen = t_announce;
  int64_t prev_t = t_announce, next_tick = t_announce + 1000000000LL;
  uint64_t prev_pk = 0, last_seen_pk = 0, ave_count = 0;
  double mps_ave = 0, bps_ave = 0;
  bool flowing = false, baseline = false;
  int64_t idle_limit = (int64_t)((o->discovery_timeout + o->finish_timeout) * 1e9);
  int tick = 0;
  while (!ms_stop && complete) {
    ms_sleep_ms(50);
    int64_t t = ms_now_ns();
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
      if (o->print_intervals) {
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
          unsigned long long bps = msgs * (unsigned long long)o->data_len * 1000000ULL / delta_us;
          ave_count++;
          bps_ave += ((double)bps - bps_ave) / (double)ave_count;
          mps_ave += ((double)mps - mps_ave) / (double)ave_count;
          uint64_t lost = sub.lost;
          if (pk > 0) {
            pt_throughput_interval_t ti = {
                .packets = pk, .packets_per_s = mps, .bytes_per_s = bps, .lost = lost,
                .packets_ave = mps_ave, .bytes_ave = bps_ave,
                .lost_percent = (float)((double)lost * 100.0 / (double)(pk + lost)),
                .cpu = o->cpu ? pr_cpu_instant() : 0.0};
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
    matched(tp_m, was, ctx);
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
    if (newest >= 0) ack(newest, fin_bits, fin_len, ctx);
    if (done == np) break;
    if (t - last_data_seen > idle_limit) {
      char miss[512];
      for (int i = 0; i < np; i++) ok[i] = atomic_load(&sub.finished[i]) != 0;
      ms_list_missing(ok, np, miss, sizeof miss);
      fprintf(stderr, "subscriber %d: no data for %.0f s; publishers not finished: %s\n",
              o->sid, (double)(t - last_data_seen) / 1e9, miss);
      rc = 1;
      break;
    }
  }
  if (ms_count_true(gone, np) > 0) {
    char miss[512];
    size_t len = 0;
    miss[0] = '\0';
    pthread_mutex_lock(&sub.m);
    for (int i = 0; i < np && len + 40 < sizeof miss; i++)
      if (gone[i])
        len += (size_t)snprintf(miss + len, sizeof miss - len, "%s%d (%" PRIu64 " samples seen)",
                                len ? ", " : "", i, sub.expected[i]);
    pthread_mutex_unlock(&sub.m);
    fprintf(stderr, "subscriber %d: publishers vanished before FINISHED: %s\n", o->sid, miss);
    rc = 1;
  }
  free(tp_m);
  free(ok);
  free(acked);
  free(gone);
  free(fin_bits);
  return rc;
}

void ms_sub_summary(void)
{
  uint64_t pk = sub.received, lost = sub.lost;
  int64_t end = sub.fin_ns != 0 ? sub.fin_ns : sub.last_ns;
  pt_throughput_summary_t ti = {.length = o->data_len, .packets = pk, .lost = lost};
  if (sub.first_ns != 0 && end > sub.first_ns)
    ti.time_us = (unsigned long long)((end - sub.first_ns) / 1000);
  ti.bytes = pk * (unsigned long long)o->data_len;
  ti.lost_percent = pk + lost ? (float)((double)lost * 100.0 / (double)(pk + lost)) : 0.0f;
  ti.cpu = o->cpu ? pr_cpu_average() : 0.0;
  pr_throughput_summary(&ti);
  pr_end();
  fprintf(stderr, "subscriber %d: received %" PRIu64 " samples, lost %" PRIu64 ", echoed %" PRIu64
                  " pings\n",
          o->sid, pk, lost, (uint64_t)sub.echoes);
  fprintf(stderr, "subscriber %d: receive loop ended at %.2f s\n", o->sid, ms_since_start());
}
