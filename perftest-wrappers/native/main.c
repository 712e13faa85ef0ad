/* perftest_cyclone: RTI Perftest-compatible throughput/latency test on Eclipse Cyclone DDS.
 *
 * Topics (DDS partition "perftest"):
 *   Throughput   publishers -> subscribers  data, pings (latency_ping >= 0) and FINISHED
 *   Latency      subscribers -> publisher 0 echoes of pings (only publisher 0 reads it)
 *   Announcement subscribers -> publishers  "ready" and "FINISHED received" (transient-local)
 * Tables go to stdout (printer.c), configuration and progress to stderr. What does not
 * touch DDS (bookkeeping, pacing, the reporting loop, messages) is measure.c, shared with
 * the Fast DDS agent; this file holds the Cyclone DDS entities and lends them to it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds.h"
/* Cyclone's serialised-sample interface (dds_takecdr's samples); its atomics header uses the
   GNU keyword asm, which -std=c11 spells __asm__. */
#define asm __asm__
#include "dds/ddsi/ddsi_serdata.h"
#undef asm
#include "dds/version.h"
#include "ddsconfig.h"
#include "effective.h"
#include "measure.h"
#include "options.h"
#include "perftest.h"
#include "perftiming.h"
#include "printer.h"

#define TAKE_N 256
#define PARTITION "perftest"

static pt_options_t opt;
static dds_entity_t dp, tp_topic, lat_topic, ann_topic, dpub, dsub;

static void fatal_dds(const char *what, dds_return_t rc)
{
  fprintf(stderr, "%s %d: %s failed: %s\n", ms_role(), ms_id(), what, dds_strretcode(rc));
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

/* ---- taking samples ------------------------------------------------------------------ */

/* The listeners take the serialised samples (dds_takecdr) and read the fields they count
   with, the 24 octets between the encapsulation header and bin_data, straight from them:
   dds_take would deserialise every sample into a TestData_t, payload copied, to use none of
   the payload (callgrind, 1 -> 1, 100 B: 709 of the subscriber's ~6,300 instructions per
   sample in dds_stream_read_sample). Cyclone keeps a received sample in this host's byte
   order (ddsi_serdata_default.c normalises it on receipt) and its encapsulation identifier
   says which. A sample is deserialised in full only to echo it (a ping), or when its
   encoding is not the expected one. Cyclone's loan (dds_take with buf[0] NULL) is no
   option: returning it zeroes all TAKE_N loaned samples on each listener call, which
   usually finds one sample (58% of the subscriber's instructions in memset). */
typedef struct {
  bool ready;                       /* s holds a sample (its payload buffer is Cyclone's) */
  perftest_TestData_t s;            /* the last sample deserialised in full */
  struct ddsi_serdata *sd[TAKE_N];
  dds_sample_info_t info[TAKE_N];
} take_buf_t;

/* Each is used by one reader's DATA_AVAILABLE listener only, so without a lock: Cyclone
   runs a reader's listener calls one at a time (m_cb_count), and dds_set_listener waits for
   a running call to return before it replaces the listener (m_cb_pending_count), so
   take_buf_free after dds_set_listener(rd, NULL) has them to itself. */
static take_buf_t data_take, echo_take;

/* TestData_t's fields before bin_data: at octet 4 of the serialised sample (after the
   encapsulation header), the same in XCDR1 and XCDR2 (a final type of 4-octet members). */
typedef struct {
  uint8_t key[4];
  int32_t entity_id;
  uint32_t seq_num;
  int32_t timestamp_sec;
  uint32_t timestamp_usec;
  int32_t latency_ping;
} head_t;
_Static_assert(sizeof(head_t) == 24, "TestData_t's fields before bin_data are 24 octets");
#define HEAD_OFFSET 4

/* The encapsulation identifiers (RTPS: two octets, big-endian) of plain CDR and XCDR2 in
   this host's byte order, the two Cyclone uses for a final type. */
static bool native_cdr(const uint8_t id[2])
{
  static const uint16_t one = 1;
  bool le = *(const uint8_t *)&one == 1;
  return id[0] == 0 && (le ? (id[1] == 0x01 || id[1] == 0x07) : (id[1] == 0x00 || id[1] == 0x06));
}

/* Deserialises sd in full into t->s (kept for the next one: its payload buffer is reused). */
static const perftest_TestData_t *take_full(take_buf_t *t, const struct ddsi_serdata *sd)
{
  t->ready = true;
  return ddsi_serdata_to_sample(sd, &t->s, NULL, NULL) ? &t->s : NULL;
}

/* The fields of sample sd; false when it cannot be read. */
static bool take_head(take_buf_t *t, const struct ddsi_serdata *sd, head_t *h)
{
  uint8_t raw[HEAD_OFFSET + sizeof(head_t)];
  if (sd->kind == SDK_DATA && ddsi_serdata_size(sd) >= sizeof raw) {
    ddsi_serdata_to_ser(sd, 0, sizeof raw, raw);
    if (native_cdr(raw)) {
      memcpy(h, raw + HEAD_OFFSET, sizeof *h);
      return true;
    }
  }
  const perftest_TestData_t *s = take_full(t, sd);
  if (s == NULL) return false;
  memcpy(h->key, s->key, sizeof h->key);
  h->entity_id = s->entity_id;
  h->seq_num = s->seq_num;
  h->timestamp_sec = s->timestamp_sec;
  h->timestamp_usec = s->timestamp_usec;
  h->latency_ping = s->latency_ping;
  return true;
}

/* Takes up to TAKE_N serialised samples into t->sd (from t's reader's listener); returns how
   many. The caller releases each (ddsi_serdata_unref). */
static int take_into(dds_entity_t rd, take_buf_t *t)
{
  return dds_takecdr(rd, t->sd, TAKE_N, t->info, 0);
}

/* Frees the payload buffer Cyclone allocated in t's sample (after the listener is gone). */
static void take_buf_free(take_buf_t *t)
{
  if (t->ready) dds_sample_free(&t->s, &perftest_TestData_t_desc, DDS_FREE_CONTENTS);
  t->ready = false;
}

/* ---- publisher ---------------------------------------------------------------------- */

/* Publisher 0's -latencyTest pings: the template sample (payload shared, read-only). */
static struct {
  dds_entity_t wr;
  perftest_TestData_t s;
} ping;

static void send_ping(const ms_ping_t *p, void *ctx)
{
  (void)ctx;
  perftest_TestData_t x = ping.s;
  x.seq_num = (uint32_t)p->seq;
  x.latency_ping = p->ping_to;
  ms_ts_to_wire(p->ts, &x.timestamp_sec, &x.timestamp_usec);
  dds_return_t rc = dds_write(ping.wr, &x);
  if (rc < 0 && rc != DDS_RETCODE_TIMEOUT)
    fprintf(stderr, "publisher 0: ping write failed: %s\n", dds_strretcode(rc));
}

static void on_echo(dds_entity_t rd, void *arg)
{
  (void)arg;
  take_buf_t *tb = &echo_take;
  for (;;) {
    int n = take_into(rd, tb);
    if (n <= 0) break;
    int64_t t = ms_now_ns();
    for (int i = 0; i < n; i++) {
      head_t h;
      if (tb->info[i].valid_data && take_head(tb, tb->sd[i], &h))
        ms_latency_echo(t, ms_ts_from_wire(h.timestamp_sec, h.timestamp_usec), h.entity_id,
                        h.seq_num);
      ddsi_serdata_unref(tb->sd[i]);
    }
    if (n < TAKE_N) break;
  }
}

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
      if (a->kind == MS_ANN_READY) ready[a->sub_id] = true;
      else if (a->kind == MS_ANN_FINISHED_ACK && (uint32_t)opt.pid / 8 < a->finished._length &&
               (a->finished._buffer[opt.pid / 8] >> (opt.pid % 8)) & 1)
        acked[a->sub_id] = true;
    }
    dds_return_loan(rd, buf, n);
    if (n < TAKE_N) return;
  }
}

/* The publisher's entities and discovery state, lent to measure.c. */
typedef struct {
  dds_entity_t wr, ann, lrd; /* lrd: the Latency reader (publisher 0), else 0 */
  bool *ready, *acked, *tp_m, *lat_m;
  const perftest_TestData_t *fin;
  bool batching;
} pub_t;

static void pub_fill(bool *ok, bool timed_out, void *ctx)
{
  pub_t *p = ctx;
  int ns = opt.num_subs;
  poll_announcements(p->ann, p->ready, p->acked);
  /* Identify matched readers only once the counts say all are there (keeps the poll
     cheap with many peers), and for the message on timeout. */
  if ((matched_count(p->wr, true) >= ns && (p->lrd == 0 || matched_count(p->lrd, false) >= ns)) ||
      timed_out) {
    matched_ids(p->wr, true, "sub", p->tp_m, ns);
    if (p->lrd) matched_ids(p->lrd, false, "sub", p->lat_m, ns);
  }
  for (int i = 0; i < ns; i++) ok[i] = p->ready[i] && p->tp_m[i] && (p->lrd == 0 || p->lat_m[i]);
}

static void pub_progress(void *ctx)
{
  pub_t *p = ctx;
  fprintf(stderr, "publisher %d: %.0f s: %d of %d subscribers announced, %d matched\n", opt.pid,
          ms_since_start(), ms_count_true(p->ready, opt.num_subs), opt.num_subs,
          matched_count(p->wr, true));
}

static int pub_write_finished(void *ctx)
{
  pub_t *p = ctx;
  dds_return_t w = dds_write(p->wr, p->fin);
  if (p->batching) dds_write_flush(p->wr);
  if (w == 0) return 1;
  if (w == DDS_RETCODE_TIMEOUT) return 0;
  fprintf(stderr, "publisher %d: FINISHED write failed: %s\n", opt.pid, dds_strretcode(w));
  return -1;
}

static void pub_poll(void *ctx)
{
  pub_t *p = ctx;
  poll_announcements(p->ann, p->ready, p->acked);
}

static int run_publisher(void)
{
  int ns = opt.num_subs;
  pub_t p = {0};
  p.ready = calloc((size_t)ns, sizeof(bool));
  p.acked = calloc((size_t)ns, sizeof(bool));
  p.tp_m = calloc((size_t)ns, sizeof(bool));
  p.lat_m = calloc((size_t)ns, sizeof(bool));
  bool *ok = calloc((size_t)ns, sizeof(bool));
  if (!p.ready || !p.acked || !p.tp_m || !p.lat_m || !ok) abort();
  ms_latency_init();

  dds_qos_t *wq = data_qos(true, "pub", opt.pid);
  /* Latency test: one ping outstanding at a time, so KEEP_LAST 1 loses nothing and the
     writer never throttles (the next ping is written from the echo listener). */
  if (opt.latency_test && !opt.best_effort) dds_qset_history(wq, DDS_HISTORY_KEEP_LAST, 1);
  p.batching = opt.batch_size != 0;
  dds_write_set_batch(p.batching); /* Cyclone 0.10: global switch (Internal/WriteBatch) */
  p.wr = mk_writer(tp_topic, wq);
  pt_report_qos(&opt, p.wr);
  p.ann = mk_reader(ann_topic, ann_qos("pub", opt.pid), NULL);
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
    p.lrd = mk_reader(lat_topic, data_qos(false, "pub", opt.pid), l);
    dds_delete_listener(l);
  }

  /* Discovery: every subscriber announced, and matched on Throughput (and Latency). */
  bool complete = ms_wait_discovery(ns, ok, pub_fill, pub_progress, &p);
  if (!ms_pub_discovered(complete, ok, p.ready, p.tp_m, p.lrd ? p.lat_m : NULL)) return 1;
  if (pt_scale_discovery_only(&opt)) pt_perftest_timing_after_discovery(&opt, dp);

  /* Send loop. */
  size_t payload = (size_t)(opt.data_len - PT_OVERHEAD_BYTES);
  perftest_TestData_t s;
  memset(&s, 0, sizeof s);
  s.entity_id = opt.pid;
  s.bin_data._buffer = calloc(payload ? payload : 1, 1);
  s.bin_data._length = s.bin_data._maximum = (uint32_t)payload;
  s.bin_data._release = false;
  int per_batch = pt_samples_per_batch(&opt), in_batch = 0;
  dds_time_t t_src = 0;
  uint64_t seq = 0, pings = 0;
  ms_pace_t pace;
  ms_pace_init(&pace);
  int rc = 0;
  if (opt.latency_test) {
    ping.wr = p.wr;
    ping.s = s;
    seq = pings = ms_latency_test(pace.t_end, send_ping, NULL);
  }
  while (!ms_stop && !opt.latency_test) {
    if (!ms_pace_next(&pace, seq)) break;
    ms_sample_t plan = ms_sample_plan(seq, pings);
    s.seq_num = (uint32_t)seq;
    if (opt.keyed) ms_key_to_wire(plan.key, s.key);
    s.latency_ping = plan.ping_to;
    if (plan.ping) ms_ts_to_wire(ms_now_ns(), &s.timestamp_sec, &s.timestamp_usec);
    dds_return_t w;
    /* A batch's samples carry one source timestamp, read when the batch begins: dds_write
       reads the clock for every sample (a few percent of the publisher's time). The agent
       measures with its own fields (timestamp_sec/usec), never with the source timestamp. */
    if (p.batching && in_batch == 0) t_src = dds_time();
    /* A throttled writer (peers lagging) retries, but not past the end of the test. */
    while ((w = p.batching ? dds_write_ts(p.wr, &s, t_src) : dds_write(p.wr, &s)) == DDS_RETCODE_TIMEOUT &&
           !ms_stop && ms_now_ns() < pace.t_end) {
    }
    if (w == DDS_RETCODE_TIMEOUT) break;
    if (w < 0) {
      fprintf(stderr, "publisher %d: dds_write failed: %s\n", opt.pid, dds_strretcode(w));
      rc = 1;
      break;
    }
    /* A batch is -batchSize / -dataLen samples, as Perftest counts it; pings leave at once. */
    if (p.batching && (plan.ping || ++in_batch == per_batch)) {
      dds_write_flush(p.wr);
      in_batch = 0;
    }
    if (plan.ping) pings++;
    seq++;
  }
  if (p.batching) dds_write_flush(p.wr);
  ms_print_sent(seq, pings, &pace);

  /* FINISHED exchange: repeat until every subscriber acknowledged (bounded). */
  s.latency_ping = MS_PING_FINISHED;
  s.seq_num = (uint32_t)seq; /* the number of samples sent */
  p.fin = &s;
  if (ms_pub_finish(p.acked, pub_write_finished, pub_poll, &p) != 0) rc = 1;
  if (opt.pid == 0) {
    if (p.lrd) dds_set_listener(p.lrd, NULL);
    take_buf_free(&echo_take);
    ms_latency_summary();
  }
  pr_end();
  free(s.bin_data._buffer);
  free(p.ready);
  free(p.acked);
  free(p.tp_m);
  free(p.lat_m);
  free(ok);
  return rc;
}

/* ---- subscriber --------------------------------------------------------------------- */

static dds_entity_t echo_wr;

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
  it->s.entity_id = opt.sid;
  it->s.latency_ping = MS_PING_NONE;
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
    while ((rc = dds_write(echo_wr, &it->s)) == DDS_RETCODE_TIMEOUT && !ms_stop) ms_sleep_ms(1);
    if (rc == 0) ms_sub_echoed();
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
  take_buf_t *tb = &data_take;
  for (;;) {
    int n = take_into(rd, tb);
    if (n <= 0) break;
    ms_batch_t b;
    ms_sub_begin(&b, ms_now_ns());
    for (int i = 0; i < n; i++) {
      struct ddsi_serdata *sd = tb->sd[i];
      head_t h;
      const perftest_TestData_t *s;
      if (tb->info[i].valid_data && take_head(tb, sd, &h) &&
          ms_sub_sample(&b, h.entity_id, h.latency_ping, h.seq_num) && h.latency_ping == opt.sid &&
          (s = take_full(tb, sd)) != NULL) {
        /* A ping: echoed in full. Fast path: write the echo right here (the echo writer
           never blocks); when its window is full, leave it to the echo thread. */
        perftest_TestData_t e = *s;
        e.entity_id = opt.sid;
        e.latency_ping = MS_PING_NONE;
        pthread_mutex_lock(&eq.m);
        bool queued = eq.head != NULL; /* keep echoes in order behind queued ones */
        pthread_mutex_unlock(&eq.m);
        if (!queued && dds_write(echo_wr, &e) == 0) ms_sub_echoed();
        else echo_enqueue(s);
      }
      ddsi_serdata_unref(sd);
    }
    ms_sub_end(&b);
    if (n < TAKE_N) break;
  }
}

/* finished: bitmap of the publishers whose FINISHED arrived (NULL for ANN_READY). */
static void announce(dds_entity_t w, int kind, int pub_id, const uint8_t *finished, uint32_t len)
{
  perftest_Announcement_t a = {.sub_id = opt.sid, .kind = kind, .pub_id = pub_id};
  a.finished._buffer = (uint8_t *)finished;
  a.finished._length = a.finished._maximum = finished ? len : 0;
  a.finished._release = false;
  dds_return_t rc = dds_write(w, &a);
  if (rc < 0) fprintf(stderr, "subscriber %d: announcement failed: %s\n", opt.sid, dds_strretcode(rc));
}

/* The subscriber's entities and discovery state, lent to measure.c. */
typedef struct {
  dds_entity_t rd, ann;
  bool *tp_m, *ann_m, lat_m[1];
} sub_t;

static void sub_fill(bool *ok, bool timed_out, void *ctx)
{
  sub_t *p = ctx;
  int np = opt.num_pubs;
  if ((matched_count(p->rd, false) >= np && matched_count(p->ann, true) >= np &&
       matched_count(echo_wr, true) >= 1) ||
      timed_out) {
    matched_ids(p->rd, false, "pub", p->tp_m, np);
    matched_ids(p->ann, true, "pub", p->ann_m, np);
    matched_ids(echo_wr, true, "pub", p->lat_m, 1);
  }
  for (int i = 0; i < np; i++) ok[i] = p->tp_m[i] && p->ann_m[i] && (i != 0 || p->lat_m[0]);
}

static void sub_progress(void *ctx)
{
  sub_t *p = ctx;
  fprintf(stderr, "subscriber %d: %.0f s: matched %d of %d publishers\n", opt.sid,
          ms_since_start(), matched_count(p->rd, false), opt.num_pubs);
}

static void sub_matched(bool *tp_m, const bool *was, void *ctx)
{
  sub_t *p = ctx;
  if (matched_count(p->rd, false) < opt.num_pubs) matched_ids(p->rd, false, "pub", tp_m, opt.num_pubs);
  else memcpy(tp_m, was, sizeof(bool) * (size_t)opt.num_pubs);
}

static void sub_ack(int newest, const uint8_t *bits, uint32_t len, void *ctx)
{
  sub_t *p = ctx;
  announce(p->ann, MS_ANN_FINISHED_ACK, newest, bits, len);
}

static int run_subscriber(void)
{
  int np = opt.num_pubs;
  ms_sub_init();
  sub_t p = {0};
  p.tp_m = calloc((size_t)np, sizeof(bool));
  p.ann_m = calloc((size_t)np, sizeof(bool));
  bool *ok = calloc((size_t)np, sizeof(bool)), *was = calloc((size_t)np, sizeof(bool));
  if (!p.tp_m || !p.ann_m || !ok || !was) abort();

  dds_qos_t *eqos = data_qos(true, "sub", opt.sid);
  if (!opt.best_effort) dds_qset_reliability(eqos, DDS_RELIABILITY_RELIABLE, 0);
  if (opt.latency_test) dds_qset_history(eqos, DDS_HISTORY_KEEP_LAST, 1);
  echo_wr = mk_writer(lat_topic, eqos);
  p.ann = mk_writer(ann_topic, ann_qos("sub", opt.sid));
  dds_listener_t *l = dds_create_listener(NULL);
  dds_lset_data_available(l, on_data);
  if (pthread_create(&eq.thread, NULL, echo_thread, NULL) != 0) abort();
  /* Perftest's ThroughputQos reader limits (perftest_qos.h). */
  dds_qos_t *rq = data_qos(false, "sub", opt.sid);
  dds_qset_resource_limits(rq, PT_READER_MAX_SAMPLES, DDS_LENGTH_UNLIMITED, PT_READER_MAX_SAMPLES);
  p.rd = mk_reader(tp_topic, rq, l);
  dds_delete_listener(l);
  pt_report_qos(&opt, p.rd);

  bool complete = ms_wait_discovery(np, ok, sub_fill, sub_progress, &p);
  if (!ms_sub_discovered(complete, ok)) return 1;
  if (pt_scale_discovery_only(&opt)) pt_perftest_timing_after_discovery(&opt, dp);
  if (complete) {
    announce(p.ann, MS_ANN_READY, -1, NULL, 0);
    ms_begin_tables();
  }
  memcpy(was, ok, sizeof(bool) * (size_t)np);

  int rc = ms_sub_receive(complete, was, sub_matched, sub_ack, &p);
  dds_set_listener(p.rd, NULL);
  take_buf_free(&data_take);
  pthread_mutex_lock(&eq.m);
  eq.stop = true;
  pthread_cond_signal(&eq.c);
  pthread_mutex_unlock(&eq.m);
  pthread_join(eq.thread, NULL);
  ms_sub_summary();
  dds_wait_for_acks(p.ann, DDS_SECS(1));
  free(p.tp_m);
  free(p.ann_m);
  free(ok);
  free(was);
  return ms_stop ? 0 : rc;
}

int main(int argc, char **argv)
{
  ms_init(&opt); /* the clock origin, malloc's mmap threshold (see measure.c), stdout's buffer */
  pt_parse_options(argc, argv, &opt);
  ms_install_signals();
  char scale[320];
  snprintf(scale, sizeof scale, "on (%s): heartbeat interval %.2f s for every writer, "
           "SPDP every %g s, Cyclone's socket buffers%s",
           opt.scale_discovery ? "-scaleDiscovery" : "-scaleSettings", pt_heartbeat_interval_s(&opt),
           pt_spdp_interval_s(&opt),
           opt.scale_discovery ? " until discovery completes, then Perftest's heartbeat timing "
                                 "and socket buffers" : "");
  ms_print_startup("perftest_cyclone", "Cyclone DDS", DDS_VERSION, pt_scale_settings(&opt) ? scale : NULL);
  if (ms_open_output_file() != 0) return 2;
  if (opt.pub && opt.batch_size > 0)
    fprintf(stderr, "config: write batching on: batches of -batchSize %d bytes, %d samples of "
                    "-dataLen %d (Perftest's count), flushed when full and at each ping; send "
                    "window %d batches (-sendQueueSize)\n",
            opt.batch_size, pt_samples_per_batch(&opt), opt.data_len, pt_send_queue_size(&opt));
  else if (opt.pub)
    fprintf(stderr, "config: write batching off (%s); send window %d samples (-sendQueueSize)\n",
            opt.batch_size_set ? "-batchSize 0, or below 2 x -dataLen"
            : opt.latency_test ? "latency test"
            : opt.pub_rate > 0 ? "-pubRate"
                               : "-dataLen above 4096 B",
            pt_send_queue_size(&opt));
  ms_print_multicast();
  fprintf(stderr, "config: transport UDPv4%s\n",
          opt.transport == PT_TRANSPORT_DEFAULT
              ? " (Perftest's default is UDPv4|SHMEM; Cyclone DDS 0.10.2 in Debian has no "
                "shared-memory transport)"
              : "");
  pt_apply_config(&opt);
  pr_init(opt.format, opt.print_intervals, opt.print_headers, opt.cpu, opt.data_len);
  create_participant();
  int rc = opt.pub ? run_publisher() : run_subscriber();
  ms_exit_if_no_teardown(rc); /* a large or signalled test leaves here (measure.c) */
  dds_delete(dp);
  ms_print_exit(rc);
  return rc;
}
