/* Unit checks of measure.c's handling of TestData_t's fields (tests/agents/test_measure_unit.py
   runs the Release and the ASan build): the 32-bit sequence number unwrapped by serial
   arithmetic across 2^32, the loss accounting of a subscriber whose publisher crosses 2^32
   (gaps and the FINISHED tail), publisher 0's ping plan, the timestamp split and the key
   octets. Prints one line per failed check and exits 1, or "measure_test: N checks passed"
   and exits 0. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "measure.h"
#include "options.h"

static int checks, failed;

#define CHECK_EQ(what, got, want)                                                             \
  do {                                                                                        \
    unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want);      \
    checks++;                                                                                 \
    if (g_ != w_) {                                                                           \
      failed++;                                                                               \
      printf("FAIL %s: got %llu, want %llu (line %d)\n", what, g_, w_, __LINE__);             \
    }                                                                                         \
  } while (0)

static const uint64_t TWO32 = 1ULL << 32;

static void unwrap(void)
{
  CHECK_EQ("same", ms_seq_unwrap(5, 5), 5);
  CHECK_EQ("ahead", ms_seq_unwrap(5, 9), 9);
  CHECK_EQ("behind", ms_seq_unwrap(9, 5), 5);
  CHECK_EQ("start, nothing behind 0", ms_seq_unwrap(3, 0xFFFFFFF0u), 0xFFFFFFF0u);
  CHECK_EQ("crossing 2^32", ms_seq_unwrap(TWO32 - 2, 1), TWO32 + 1);
  CHECK_EQ("just below 2^32", ms_seq_unwrap(TWO32 + 3, 0xFFFFFFFFu), TWO32 - 1);
  CHECK_EQ("crossing 2^33", ms_seq_unwrap(2 * TWO32 - 1, 0), 2 * TWO32);
  CHECK_EQ("gap of 2^31 - 1", ms_seq_unwrap(TWO32 - 10, (uint32_t)(TWO32 - 10 + 0x7FFFFFFF)),
           TWO32 - 10 + 0x7FFFFFFF);
  CHECK_EQ("far run", ms_seq_unwrap(7 * TWO32 + 100, 50), 7 * TWO32 + 50);
  /* every sequence number of a run across 2^32, unwrapped from its predecessor */
  uint64_t expected = TWO32 - 100000, bad = 0;
  for (uint64_t seq = expected; seq < TWO32 + 100000; seq++) {
    if (ms_seq_unwrap(expected, (uint32_t)seq) != seq) bad++;
    expected = seq + 1;
  }
  CHECK_EQ("200000 consecutive numbers across 2^32", bad, 0);
}

/* A subscriber's view of one publisher whose sequence numbers run from 2^32 - 1000 to
   2^32 + 1000, with samples lost on both sides of 2^32 and at the tail. */
static void subscriber_across_2_32(void)
{
  static pt_options_t o;
  memset(&o, 0, sizeof o);
  o.sub = true;
  o.num_pubs = 1;
  o.num_subs = 1;
  o.data_len = 100;
  ms_init(&o);
  ms_sub_init();
  uint64_t got = 0, lost = 0, first = TWO32 - 1000, last = TWO32 + 1000;
  uint64_t want_lost = 0;
  for (uint64_t seq = first; seq < last; seq++) {
    /* lost: 5 before 2^32, 2^32 - 1 .. 2^32 + 1 (3 across it), 7 after */
    bool drop = (seq >= TWO32 - 200 && seq < TWO32 - 195) || (seq >= TWO32 - 1 && seq <= TWO32 + 1) ||
                (seq >= TWO32 + 500 && seq < TWO32 + 507);
    if (drop) {
      want_lost++;
      continue;
    }
    ms_batch_t b;
    ms_sub_begin(&b, 1);
    bool data = ms_sub_sample(&b, 0, MS_PING_NONE, (uint32_t)seq);
    ms_sub_end(&b);
    CHECK_EQ("data sample accepted", data, 1);
    got += b.got;
    lost += b.lost;
  }
  CHECK_EQ("received across 2^32", got, (last - first) - want_lost);
  CHECK_EQ("lost across 2^32", lost, want_lost);
  /* FINISHED says 2^32 + 1010 were sent: the last 10 never arrived */
  ms_batch_t b;
  ms_sub_begin(&b, 2);
  bool data = ms_sub_sample(&b, 0, MS_PING_FINISHED, (uint32_t)(last + 10));
  ms_sub_end(&b);
  CHECK_EQ("FINISHED is not data", data, 0);
  CHECK_EQ("tail lost after 2^32", b.lost, 10);
}

static void fields(void)
{
  int32_t hi;
  uint32_t lo;
  int64_t ns = (int64_t)5000000123456789LL; /* ~58 days of monotonic clock: above 2^32 us */
  ms_ts_to_wire(ns, &hi, &lo);
  CHECK_EQ("timestamp high word", (uint32_t)hi, (uint64_t)(ns / 1000) >> 32);
  CHECK_EQ("timestamp round trip (us resolution)", ms_ts_from_wire(hi, lo), ns / 1000 * 1000);
  uint8_t k[4];
  ms_key_to_wire(0x01020304, k);
  CHECK_EQ("key octet 0", k[0], 4);
  CHECK_EQ("key octet 3", k[3], 1);
}

/* Publisher 0's plan: every latencyCount-th sample a ping (the first included), addressed
   round robin; checked against the definition for a run in order and for numbers out of
   order (ms_sample_plan remembers the last multiple of latencyCount it computed). */
static void sample_plan(void)
{
  static pt_options_t o;
  memset(&o, 0, sizeof o);
  o.pub = true;
  o.pid = 0;
  o.num_subs = 3;
  o.latency_count = 7;
  ms_init(&o);
  uint64_t bad = 0, pings = 0;
  for (uint64_t seq = 0; seq < 10000; seq++) {
    ms_sample_t p = ms_sample_plan(seq, pings);
    bool want = seq % 7 == 0;
    if (p.ping != want || p.ping_to != (want ? (int32_t)(pings % 3) : -1)) bad++;
    if (p.ping) pings++;
  }
  CHECK_EQ("pings of a run in order", bad, 0);
  CHECK_EQ("pings in 10000 samples", pings, 1429);
  const uint64_t jumps[] = {70, 69, 71, 0, 6, 7, 8, 13, 14, 3 * TWO32, 3 * TWO32 + 1, 700, 699, 5};
  bad = 0;
  for (size_t i = 0; i < sizeof jumps / sizeof jumps[0]; i++)
    if (ms_sample_plan(jumps[i], 0).ping != (jumps[i] % 7 == 0)) bad++;
  CHECK_EQ("pings out of order", bad, 0);
  o.latency_count = 5; /* another test's options: the remembered multiple is not reused */
  CHECK_EQ("latencyCount 5: 10 is a ping", ms_sample_plan(10, 0).ping, 1);
  CHECK_EQ("latencyCount 5: 15 is a ping", ms_sample_plan(15, 0).ping, 1);
  o.pid = 1;
  CHECK_EQ("publisher 1 sends no pings", ms_sample_plan(0, 0).ping, 0);
}

int main(void)
{
  unwrap();
  sample_plan();
  subscriber_across_2_32();
  fields();
  if (failed) {
    printf("measure_test: %d of %d checks failed\n", failed, checks);
    return 1;
  }
  printf("measure_test: %d checks passed\n", checks);
  return 0;
}
