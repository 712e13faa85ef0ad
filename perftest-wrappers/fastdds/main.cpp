// perftest_fastdds: RTI Perftest-compatible throughput/latency test on eProsima Fast DDS.
//
// The same contract as the native agent (perftest-wrappers/native: command line, protocol,
// output, role checks, exit statuses, bounded waits, SIGINT/SIGTERM summaries); the command
// line and the output tables are the native agent's own code (options.c, printer.c).
//
// Topics (DDS partition "perftest"):
//   Throughput   publishers -> subscribers  data, pings (ping_to >= 0) and FINISHED
//   Latency      subscribers -> publisher 0 echoes of pings (only publisher 0 reads it)
//   Announcement subscribers -> publishers  "ready" and "FINISHED received" (transient-local)
// Tables go to stdout (printer.c), configuration and progress to stderr.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/StdoutErrConsumer.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastrtps/config.h>

#include "config.hpp"
#include "options.h"
#include "printer.h"
#include "types.hpp"

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::Duration_t;
using eprosima::fastrtps::rtps::GUID_t;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::types::ReturnCode_t;
using perftest::Announcement;
using perftest::TestData;

namespace {

const char *PROG = "perftest_fastdds";
const char *PARTITION = "perftest";

pt_options_t opt;
volatile sig_atomic_t g_stop;
int64_t t_start;

DomainParticipant *dp;
Publisher *dpub;
Subscriber *dsub;
Topic *tp_topic, *lat_topic, *ann_topic;
perftest::AgentConfig cfg;

int64_t now_ns()
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double since_start() { return static_cast<double>(now_ns() - t_start) / 1e9; }

void sleep_ms(int ms)
{
  struct timespec ts = {ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_stop) {
  }
}

void on_signal(int) { g_stop = 1; }

const char *role() { return opt.pub ? "publisher" : "subscriber"; }
int my_id() { return opt.pub ? opt.pid : opt.sid; }

// Exits without running destructors: Fast DDS's threads may still be running.
[[noreturn]] void fatal(const char *what)
{
  std::fprintf(stderr, "%s %d: %s failed\n", role(), my_id(), what);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(1);
}

bool retryable(ReturnCode_t rc)
{
  return rc == ReturnCode_t::RETCODE_TIMEOUT || rc == ReturnCode_t::RETCODE_OUT_OF_RESOURCES;
}

// ---- who is matched ----------------------------------------------------------------------
// Remote endpoints carry "<tag>=<id>" in USER_DATA ("pub=3"); the participant listener
// records each discovered endpoint's id by GUID, and each local endpoint's listener keeps
// the set of GUIDs it is matched with. Ids are looked up when asked (discovery and
// matching callbacks come in either order).

using Key = std::array<uint8_t, 16>;

Key key_of(const InstanceHandle_t &h)
{
  Key k;
  for (size_t i = 0; i < 16; i++) k[i] = h.value[i];
  return k;
}

struct {
  std::mutex m;
  std::map<Key, std::pair<std::string, int>> ids;
} g_ids;

void record_ids(const GUID_t &guid, const std::vector<eprosima::fastrtps::rtps::octet> &ud)
{
  std::string s(ud.begin(), ud.end());
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq + 1 >= s.size() || s.size() > 31) return;
  int id = std::atoi(s.c_str() + eq + 1);
  std::lock_guard<std::mutex> g(g_ids.m);
  g_ids.ids[key_of(InstanceHandle_t(guid))] = {s.substr(0, eq), id};
}

class ParticipantListener : public DomainParticipantListener {
 public:
  void on_subscriber_discovery(DomainParticipant *, eprosima::fastrtps::rtps::ReaderDiscoveryInfo &&info) override
  {
    if (info.status != eprosima::fastrtps::rtps::ReaderDiscoveryInfo::REMOVED_READER)
      record_ids(info.info.guid(), info.info.m_qos.m_userData.data_vec());
  }
  void on_publisher_discovery(DomainParticipant *, eprosima::fastrtps::rtps::WriterDiscoveryInfo &&info) override
  {
    if (info.status != eprosima::fastrtps::rtps::WriterDiscoveryInfo::REMOVED_WRITER)
      record_ids(info.info.guid(), info.info.m_qos.m_userData.data_vec());
  }
} g_participant_listener;

struct Matched {
  std::mutex m;
  std::set<Key> keys;
  void update(const InstanceHandle_t &h, int32_t change)
  {
    std::lock_guard<std::mutex> g(m);
    if (change > 0) keys.insert(key_of(h));
    else if (change < 0) keys.erase(key_of(h));
  }
  int count()
  {
    std::lock_guard<std::mutex> g(m);
    return static_cast<int>(keys.size());
  }
  // Marks in seen[0..n) the ids of the matched endpoints tagged `tag`; returns how many.
  int ids(const char *tag, bool *seen, int n)
  {
    std::memset(seen, 0, sizeof(bool) * static_cast<size_t>(n));
    std::lock_guard<std::mutex> g(m);
    std::lock_guard<std::mutex> g2(g_ids.m);
    int c = 0;
    for (const Key &k : keys) {
      auto it = g_ids.ids.find(k);
      if (it == g_ids.ids.end() || it->second.first != tag) continue;
      int id = it->second.second;
      if (id >= 0 && id < n && !seen[id]) {
        seen[id] = true;
        c++;
      }
    }
    return c;
  }
};

class WriterListener : public DataWriterListener {
 public:
  Matched matched;
  void on_publication_matched(DataWriter *, const PublicationMatchedStatus &st) override
  {
    matched.update(st.last_subscription_handle, st.current_count_change);
  }
};

class ReaderListener : public DataReaderListener {
 public:
  Matched matched;
  std::function<void(DataReader *)> on_data;
  void on_subscription_matched(DataReader *, const SubscriptionMatchedStatus &st) override
  {
    matched.update(st.last_publication_handle, st.current_count_change);
  }
  void on_data_available(DataReader *r) override
  {
    if (on_data) on_data(r);
  }
};

// ---- QoS and entities ----------------------------------------------------------------------

std::vector<eprosima::fastrtps::rtps::octet> user_data(const char *tag, int id)
{
  char ud[32];
  int n = std::snprintf(ud, sizeof ud, "%s=%d", tag, id);
  return std::vector<eprosima::fastrtps::rtps::octet>(ud, ud + n);
}

// Memory of the histories: preallocated and grown as needed, except for large samples,
// which are allocated when used (a preallocated pool of 16 MiB samples would not fit).
eprosima::fastrtps::rtps::MemoryManagementPolicy_t memory_policy()
{
  return opt.data_len > 65536 ? eprosima::fastrtps::rtps::DYNAMIC_RESERVE_MEMORY_MODE
                              : eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
}

// KEEP_ALL histories are bounded by max_samples_per_instance too, 400 by default in Fast
// DDS: with one instance (unkeyed topics), a window of 400 samples, not max_samples. Keyed:
// the window is shared by the instances (Fast DDS refuses max_instances x
// max_samples_per_instance > max_samples).
void keyed_limits(ResourceLimitsQosPolicy &rl)
{
  if (!opt.keyed) {
    rl.max_samples_per_instance = rl.max_samples;
    return;
  }
  rl.max_instances = opt.instances;
  rl.max_samples_per_instance = std::max(1, rl.max_samples / opt.instances);
  rl.max_samples = rl.max_samples_per_instance * opt.instances;
  rl.allocated_samples = std::min(rl.allocated_samples, rl.max_samples);
}

DataWriterQos data_writer_qos(const char *tag, int id)
{
  DataWriterQos q = dpub->get_default_datawriter_qos();
  if (opt.best_effort) {
    q.reliability().kind = BEST_EFFORT_RELIABILITY_QOS;
    q.history().kind = KEEP_LAST_HISTORY_QOS;
    q.history().depth = 1;
  } else {
    q.reliability().kind = RELIABLE_RELIABILITY_QOS;
    q.reliability().max_blocking_time = Duration_t(1, 0);
    q.history().kind = KEEP_ALL_HISTORY_QOS;
    q.resource_limits().max_samples = cfg.writer_max_samples;
    q.resource_limits().allocated_samples = std::min(cfg.writer_max_samples, 100);
  }
  q.reliable_writer_qos().times.heartbeatPeriod = cfg.heartbeat_period;
  q.durability().kind = VOLATILE_DURABILITY_QOS;
  keyed_limits(q.resource_limits());
  q.data_sharing().off();
  q.endpoint().history_memory_policy = memory_policy();
  q.user_data().data_vec(user_data(tag, id));
  // Samples above one datagram are fragmented; synchronous writers send them at once.
  q.publish_mode().kind = SYNCHRONOUS_PUBLISH_MODE;
  return q;
}

DataReaderQos data_reader_qos(const char *tag, int id, int topic)
{
  DataReaderQos q = dsub->get_default_datareader_qos();
  q.reliability().kind = opt.best_effort ? BEST_EFFORT_RELIABILITY_QOS : RELIABLE_RELIABILITY_QOS;
  q.history().kind = KEEP_ALL_HISTORY_QOS;
  q.durability().kind = VOLATILE_DURABILITY_QOS;
  keyed_limits(q.resource_limits());
  q.data_sharing().off();
  q.endpoint().history_memory_policy = memory_policy();
  // -multicast: the reader announces only its group, so every writer sends to the group
  // (with a unicast locator too, Fast DDS sends to a group only when another matched
  // reader shares it: UDPTransportInterface::select_locators).
  if (opt.multicast) q.endpoint().multicast_locator_list.push_back(cfg.groups[topic]);
  q.user_data().data_vec(user_data(tag, id));
  return q;
}

DataWriterQos ann_writer_qos(int id)
{
  DataWriterQos q = dpub->get_default_datawriter_qos();
  q.reliability().kind = RELIABLE_RELIABILITY_QOS;
  q.reliability().max_blocking_time = Duration_t(1, 0);
  q.durability().kind = TRANSIENT_LOCAL_DURABILITY_QOS;
  q.history().kind = KEEP_ALL_HISTORY_QOS;
  q.data_sharing().off();
  q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  q.reliable_writer_qos().times.heartbeatPeriod = cfg.heartbeat_period;
  q.user_data().data_vec(user_data("sub", id));
  return q;
}

DataReaderQos ann_reader_qos(int id)
{
  DataReaderQos q = dsub->get_default_datareader_qos();
  q.reliability().kind = RELIABLE_RELIABILITY_QOS;
  q.durability().kind = TRANSIENT_LOCAL_DURABILITY_QOS;
  q.history().kind = KEEP_ALL_HISTORY_QOS;
  q.data_sharing().off();
  q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  if (opt.multicast) q.endpoint().multicast_locator_list.push_back(cfg.groups[2]);
  q.user_data().data_vec(user_data("pub", id));
  return q;
}

DataWriter *mk_writer(Topic *t, const DataWriterQos &q, WriterListener *l)
{
  DataWriter *w = dpub->create_datawriter(t, q, l, StatusMask::publication_matched());
  if (w == nullptr) fatal("create_datawriter");
  return w;
}

DataReader *mk_reader(Topic *t, const DataReaderQos &q, ReaderListener *l)
{
  StatusMask mask = StatusMask::subscription_matched();
  if (l->on_data) mask << StatusMask::data_available();
  DataReader *r = dsub->create_datareader(t, q, l, mask);
  if (r == nullptr) fatal("create_datareader");
  return r;
}

void create_participant()
{
  DomainParticipantFactory *f = DomainParticipantFactory::get_instance();
  cfg.participant = f->get_default_participant_qos();
  char name[64];
  std::snprintf(name, sizeof name, "perftest_fastdds %s %d", role(), my_id());
  std::string err;
  if (!perftest::build_config(opt, name, cfg, err)) {
    std::fprintf(stderr, "%s: %s\n", PROG, err.c_str());
    std::fflush(stdout);
    _exit(1);
  }
  std::fprintf(stderr, "config: %s\n", perftest::mode_description(opt));
  if (opt.pub && opt.pub_rate > 0)
    std::fprintf(stderr, "config: publication rate %lld samples/s (%s; no batching)\n", opt.pub_rate,
                 opt.pub_rate_sleep ? "sleep" : "spin");
  std::fprintf(stderr, "config: agent Fast DDS profile (set through the QoS API): %s\n", cfg.xml.c_str());
  dp = f->create_participant(static_cast<DomainId_t>(opt.domain), cfg.participant,
                             &g_participant_listener, StatusMask::none());
  if (dp == nullptr) fatal("create_participant (check -nic)");
  if (opt.print_config) {
    DomainParticipantQos eff;
    dp->get_qos(eff);
    std::fprintf(stderr, "config: effective participant QoS: %s\n",
                 perftest::describe_participant(eff).c_str());
  }
  uint32_t payload = static_cast<uint32_t>(opt.data_len - PT_OVERHEAD_BYTES);
  TypeSupport td(new perftest::TestDataType(opt.keyed, payload));
  // A publisher does not know how many publishers there are: accept any bitmap up to the
  // largest count the options allow.
  TypeSupport ann(new perftest::AnnouncementType(100000));
  if (td.register_type(dp) != ReturnCode_t::RETCODE_OK ||
      ann.register_type(dp) != ReturnCode_t::RETCODE_OK)
    fatal("register_type");
  tp_topic = dp->create_topic("Throughput", td.get_type_name(), TOPIC_QOS_DEFAULT);
  lat_topic = dp->create_topic("Latency", td.get_type_name(), TOPIC_QOS_DEFAULT);
  ann_topic = dp->create_topic("Announcement", ann.get_type_name(), TOPIC_QOS_DEFAULT);
  if (!tp_topic || !lat_topic || !ann_topic) fatal("create_topic");
  PublisherQos pq = dp->get_default_publisher_qos();
  pq.partition().push_back(PARTITION);
  SubscriberQos sq = dp->get_default_subscriber_qos();
  sq.partition().push_back(PARTITION);
  dpub = dp->create_publisher(pq);
  dsub = dp->create_subscriber(sq);
  if (!dpub || !dsub) fatal("create_publisher/subscriber");
}

// "5, 17, 44" (at most 20 ids, then "...") of the ids i in [0,n) with !ok[i].
void list_missing(const bool *ok, int n, char *out, size_t cap)
{
  size_t len = 0;
  int shown = 0;
  out[0] = '\0';
  for (int i = 0; i < n && len + 16 < cap; i++) {
    if (ok[i]) continue;
    if (shown == 20) {
      len += static_cast<size_t>(std::snprintf(out + len, cap - len, ", ..."));
      break;
    }
    len += static_cast<size_t>(std::snprintf(out + len, cap - len, "%s%d", shown ? ", " : "", i));
    shown++;
  }
}

int count_true(const bool *a, int n)
{
  int c = 0;
  for (int i = 0; i < n; i++) c += a[i];
  return c;
}

// ---- latency bookkeeping (publisher 0) -------------------------------------------------

struct {
  std::mutex m;
  std::condition_variable c;
  std::vector<unsigned long> v;  // one-way latencies in µs, in arrival order
  unsigned long long sum = 0, sumsq = 0;
  unsigned long min = 0, max = 0;
  std::vector<uint64_t> per_sub;
  uint64_t echoes = 0;  // every echo, the discarded first one included
  uint64_t skew = 0;    // echoes stamped before they were sent
} lat;

// -latencyTest: the next ping leaves from the echo listener itself; the main thread only
// starts the test and re-sends after a ping timed out. Guarded by lat.m.
struct {
  DataWriter *wr = nullptr;
  TestData s;  // template
  uint64_t cur = 0, sent = 0;
  int64_t t_cur = 0, t_end = 0;
  bool active = false, done = false;
} lt;

bool lt_next_locked(TestData &out)
{
  if (g_stop || now_ns() >= lt.t_end ||
      (opt.num_iter > 0 && lt.sent >= static_cast<uint64_t>(opt.num_iter))) {
    lt.done = true;
    lat.c.notify_all();
    return false;
  }
  lt.cur = lt.sent++;
  out.seq = lt.cur;
  out.ping_to = static_cast<int32_t>(lt.cur % static_cast<uint64_t>(opt.num_subs));
  out.ts = lt.t_cur = now_ns();
  return true;
}

void lt_write(TestData &x)
{
  ReturnCode_t rc = lt.wr->write(&x, HANDLE_NIL);
  if (rc != ReturnCode_t::RETCODE_OK && rc != ReturnCode_t::RETCODE_TIMEOUT)
    std::fprintf(stderr, "publisher 0: ping write failed (code %d)\n", static_cast<int>(rc()));
}

std::mutex echo_take_m;  // Fast DDS may call the listener from several receive threads

void on_echo(DataReader *rd)
{
  std::lock_guard<std::mutex> take_guard(echo_take_m);
  static TestData s, next;
  SampleInfo info;
  while (rd->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
    int64_t t = now_ns();
    if (!info.valid_data || s.kind != perftest::KIND_ECHO) continue;
    // Perftest: integer microseconds, half the round trip.
    int64_t now_us = t / 1000, sent_us = s.ts / 1000;
    std::unique_lock<std::mutex> g(lat.m);
    bool first = lat.echoes++ == 0, ok = now_us >= sent_us;
    unsigned long us = ok ? static_cast<unsigned long>((now_us - sent_us) / 2) : 0;
    if (s.sub_id >= 0 && s.sub_id < opt.num_subs) lat.per_sub[static_cast<size_t>(s.sub_id)]++;
    if (!ok) lat.skew++;
    // Perftest discards the first pong (it only opens the table).
    bool keep = ok && !first;
    if (keep) {
      lat.v.push_back(us);
      lat.sum += us;
      lat.sumsq += static_cast<unsigned long long>(us) * us;
      if (lat.v.size() == 1 || us < lat.min) lat.min = us;
      if (lat.v.size() == 1 || us > lat.max) lat.max = us;
    }
    bool send = false;
    if (lt.active && !lt.done && s.seq == lt.cur) {
      next = lt.s;
      send = lt_next_locked(next);
    }
    size_t cnt = lat.v.size();
    pt_latency_interval_t li{};
    li.latency = us;
    li.minimum = lat.min;
    li.maximum = lat.max;
    if (cnt > 0) {
      li.average = static_cast<double>(lat.sum) / static_cast<double>(cnt);
      double var = static_cast<double>(lat.sumsq) / static_cast<double>(cnt) - li.average * li.average;
      li.std = var > 0 ? std::sqrt(var) : 0.0;
    }
    if (!lt.active) lat.c.notify_all();
    g.unlock();
    if (send) lt_write(next);
    if (first) pr_latency_header();
    else if (keep && opt.print_intervals) {
      li.cpu = opt.cpu ? pr_cpu_instant() : 0.0;
      pr_latency_interval(&li);
    }
  }
}

// Perftest 4.1+ -latencyFile: appended, a header, "i, v" rows in arrival order, a blank line.
void write_latency_file()
{
  FILE *f = std::fopen(opt.latency_file, "a");
  if (f == nullptr) {
    std::fprintf(stderr, "publisher 0: cannot write -latencyFile %s: %s\n", opt.latency_file,
                 std::strerror(errno));
    return;
  }
  std::fprintf(stderr, "Saving latency information in \"%s\".\n", opt.latency_file);
  std::fprintf(f, "Sample Number, Value\n");
  for (size_t i = 0; i < lat.v.size(); i++) std::fprintf(f, "%zu, %lu\n", i, lat.v[i]);
  std::fprintf(f, "\n");
  std::fclose(f);
}

void print_latency_summary()
{
  std::unique_lock<std::mutex> g(lat.m);
  size_t n = lat.v.size();
  std::string per;
  for (int i = 0; i < opt.num_subs && per.size() < 4000; i++) {
    char b[48];
    std::snprintf(b, sizeof b, "%s%d:%" PRIu64, i ? " " : "", i, lat.per_sub[static_cast<size_t>(i)]);
    per += b;
  }
  if (lat.skew)
    std::fprintf(stderr, "The following latency result may not be accurate because clock skew "
                         "happens %" PRIu64 " times\n", lat.skew);
  if (n == 0) {
    g.unlock();
    std::fprintf(stderr, "publisher 0: no echo (pong) received after the first (Perftest discards "
                         "it): no latency summary; increase the run length or lower -latencyCount\n");
    return;
  }
  if (opt.latency_file) write_latency_file();
  std::vector<unsigned long> v = lat.v;
  std::sort(v.begin(), v.end());
  double ave = static_cast<double>(lat.sum) / static_cast<double>(n);
  double var = static_cast<double>(lat.sumsq) / static_cast<double>(n) - ave * ave;
  pt_latency_summary_t li{};
  li.length = opt.data_len;
  li.average = ave;
  li.std = var > 0 ? std::sqrt(var) : 0.0;
  li.minimum = lat.min;
  li.maximum = lat.max;
  li.p50 = v[n * 50 / 100];
  li.p90 = v[n * 90 / 100];
  li.p99 = v[n * 99 / 100];
  li.p9999 = v[static_cast<size_t>(static_cast<double>(n) * (9999.0 / 10000))];
  li.p999999 = v[static_cast<size_t>(static_cast<double>(n) * (999999.0 / 1000000))];
  g.unlock();
  li.cpu = opt.cpu ? pr_cpu_average() : 0.0;
  pr_latency_summary(&li);
  std::fprintf(stderr, "publisher 0: %zu latency samples (first echo discarded, as Perftest); echoes "
                       "per subscriber: %s\n", n, per.c_str());
}

// ---- publisher ---------------------------------------------------------------------------

void poll_announcements(DataReader *rd, bool *ready, bool *acked)
{
  static Announcement a;
  SampleInfo info;
  while (rd->take_next_sample(&a, &info) == ReturnCode_t::RETCODE_OK) {
    if (!info.valid_data || a.sub_id < 0 || a.sub_id >= opt.num_subs) continue;
    if (a.kind == perftest::ANN_READY) ready[a.sub_id] = true;
    else if (a.kind == perftest::ANN_FINISHED_ACK &&
             static_cast<size_t>(opt.pid) / 8 < a.finished.size() &&
             ((a.finished[static_cast<size_t>(opt.pid) / 8] >> (opt.pid % 8)) & 1))
      acked[a.sub_id] = true;
  }
}

WriterListener pub_wl;
ReaderListener pub_ann_l, pub_lat_l;

int run_publisher()
{
  int ns = opt.num_subs;
  std::vector<char> ready_v(static_cast<size_t>(ns)), acked_v(static_cast<size_t>(ns)),
      tp_v(static_cast<size_t>(ns)), lat_v(static_cast<size_t>(ns)), ok_v(static_cast<size_t>(ns));
  bool *ready = reinterpret_cast<bool *>(ready_v.data()), *acked = reinterpret_cast<bool *>(acked_v.data());
  bool *tp_m = reinterpret_cast<bool *>(tp_v.data()), *lat_m = reinterpret_cast<bool *>(lat_v.data());
  bool *ok = reinterpret_cast<bool *>(ok_v.data());
  lat.per_sub.assign(static_cast<size_t>(ns), 0);

  DataWriterQos wq = data_writer_qos("pub", opt.pid);
  // Latency test: one ping outstanding at a time, so KEEP_LAST 1 loses nothing and the
  // writer never blocks (the next ping is written from the echo listener).
  if (opt.latency_test && !opt.best_effort) {
    wq.history().kind = KEEP_LAST_HISTORY_QOS;
    wq.history().depth = 1;
  }
  DataWriter *wr = mk_writer(tp_topic, wq, &pub_wl);
  DataReader *ann = mk_reader(ann_topic, ann_reader_qos(opt.pid), &pub_ann_l);
  DataReader *lrd = nullptr;
  if (opt.pid == 0) {
    if (opt.latency_file) {
      // Fail now rather than after the test (the samples are written at the summary).
      FILE *f = std::fopen(opt.latency_file, "a");
      if (f) std::fclose(f);
      else {
        std::fprintf(stderr, "publisher 0: cannot write -latencyFile %s: %s\n", opt.latency_file,
                     std::strerror(errno));
        return 2;
      }
    }
    pub_lat_l.on_data = on_echo;
    lrd = mk_reader(lat_topic, data_reader_qos("pub", opt.pid, 1), &pub_lat_l);
  }

  std::fprintf(stderr, "publisher %d: waiting for %d subscribers (timeout %g s)\n", opt.pid, ns,
               opt.discovery_timeout);
  int64_t t0 = now_ns(), next_progress = t0 + 5000000000LL;
  bool complete = false;
  while (!g_stop) {
    poll_announcements(ann, ready, acked);
    int64_t t = now_ns();
    bool timed_out = t - t0 > static_cast<int64_t>(opt.discovery_timeout * 1e9);
    pub_wl.matched.ids("sub", tp_m, ns);
    if (lrd) pub_lat_l.matched.ids("sub", lat_m, ns);
    for (int i = 0; i < ns; i++) ok[i] = ready[i] && tp_m[i] && (lrd == nullptr || lat_m[i]);
    if (count_true(ok, ns) == ns) {
      complete = true;
      break;
    }
    if (timed_out) break;
    if (t >= next_progress) {
      std::fprintf(stderr, "publisher %d: %.0f s: %d of %d subscribers announced, %d matched\n",
                   opt.pid, since_start(), count_true(ready, ns), ns, pub_wl.matched.count());
      next_progress += 5000000000LL;
    }
    sleep_ms(ns > 20 ? 200 : 20);
  }
  if (!complete && !g_stop) {
    char miss[512];
    list_missing(ok, ns, miss, sizeof miss);
    std::fprintf(stderr,
                 "publisher %d saw %d of %d subscribers within %g s: missing %s "
                 "(announced %d, Throughput matched %d%s)\n",
                 opt.pid, count_true(ok, ns), ns, opt.discovery_timeout, miss,
                 count_true(ready, ns), count_true(tp_m, ns), lrd ? ", Latency matched" : "");
    if (lrd)
      std::fprintf(stderr, "publisher 0: Latency reader matched %d of %d echo writers\n",
                   count_true(lat_m, ns), ns);
    return 1;
  }
  if (complete)
    std::fprintf(stderr, "publisher %d: discovery complete: %d subscribers after %.2f s (process start)\n",
                 opt.pid, ns, since_start());
  pr_begin();
  if (opt.cpu) pr_cpu_start();

  // Send loop.
  TestData s;
  s.pub_id = opt.pid;
  s.sub_id = -1;
  s.bin_data.assign(static_cast<size_t>(opt.data_len - PT_OVERHEAD_BYTES), 0);
  uint64_t seq = 0, pings = 0;
  int64_t t_send = now_ns();
  int64_t t_end = opt.exec_time > 0 ? t_send + static_cast<int64_t>(opt.exec_time * 1e9) : INT64_MAX;
  int rc = 0;
  if (opt.latency_test) {
    int64_t ping_timeout = opt.best_effort ? 100000000LL : 1000000000LL;
    TestData x;
    std::unique_lock<std::mutex> g(lat.m);
    lt.wr = wr;
    lt.s = s;
    lt.s.kind = perftest::KIND_DATA;
    lt.t_end = t_end;
    lt.active = true;
    x = lt.s;
    bool send = lt_next_locked(x);
    while (!lt.done) {
      if (send) {
        g.unlock();
        lt_write(x);
        g.lock();
      }
      lat.c.wait_for(g, std::chrono::milliseconds(10));
      send = false;
      if (!lt.done && (g_stop || now_ns() - lt.t_cur > ping_timeout || now_ns() >= t_end)) {
        x = lt.s;
        send = lt_next_locked(x);  // lost ping or echo: go on (or finish)
      }
    }
    seq = pings = lt.sent;
  }
  // -pubRate: sample k is due at t_send + k / rate; more than 100 ms behind restarts the
  // schedule instead of bursting.
  int64_t period_ns = opt.pub_rate > 0 ? static_cast<int64_t>(1e9 / static_cast<double>(opt.pub_rate)) : 0;
  int64_t due = t_send;
  while (!g_stop && !opt.latency_test) {
    if (period_ns > 0) {
      int64_t t = now_ns();
      if (t - due > 100000000LL) due = t;
      if (due > t) {
        if (opt.pub_rate_sleep) {
          struct timespec ts = {static_cast<time_t>(due / 1000000000LL), static_cast<long>(due % 1000000000LL)};
          while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR && !g_stop) {
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
    if (opt.num_iter > 0 && seq >= static_cast<uint64_t>(opt.num_iter)) break;
    s.seq = seq;
    s.kind = perftest::KIND_DATA;
    s.key = opt.keyed ? static_cast<int32_t>(seq % static_cast<uint64_t>(opt.instances)) : 0;
    bool ping = opt.pid == 0 && (seq % static_cast<uint64_t>(opt.latency_count)) == 0;
    s.ping_to = ping ? static_cast<int32_t>(pings % static_cast<uint64_t>(ns)) : -1;
    if (ping) s.ts = now_ns();
    ReturnCode_t w;
    // A blocked writer (peers lagging) retries, but not past the end of the test.
    while (retryable(w = wr->write(&s, HANDLE_NIL)) && !g_stop && now_ns() < t_end) {
    }
    if (retryable(w)) break;
    if (w != ReturnCode_t::RETCODE_OK) {
      std::fprintf(stderr, "publisher %d: write failed (code %d)\n", opt.pid, static_cast<int>(w()));
      rc = 1;
      break;
    }
    if (ping) pings++;
    seq++;
  }
  double secs = static_cast<double>(now_ns() - t_send) / 1e9;
  std::fprintf(stderr, "publisher %d: sent %" PRIu64 " samples (%" PRIu64 " pings) in %.2f s%s\n",
               opt.pid, seq, pings, secs, g_stop ? " (interrupted)" : "");

  // FINISHED exchange: bounded wait, reset by progress (as the native agent, main.c).
  s.kind = perftest::KIND_FINISHED;
  s.ping_to = -1;
  s.seq = seq;
  int64_t fin_step = static_cast<int64_t>((g_stop ? 1.0 : opt.finish_timeout) * 1e9);
  int64_t fin_start = now_ns(), fin_cap = fin_start + 3 * fin_step;
  int64_t fin_deadline = fin_start + (opt.best_effort || g_stop ? 1 : 2) * fin_step;
  int64_t next_fin = 0;
  int nacked = 0;
  bool queued = false;
  while (now_ns() < fin_deadline) {
    bool progress = false;
    if ((opt.best_effort || !queued) && now_ns() >= next_fin) {
      ReturnCode_t w = wr->write(&s, HANDLE_NIL);
      if (w == ReturnCode_t::RETCODE_OK && !queued) progress = queued = true;
      else if (w != ReturnCode_t::RETCODE_OK && !retryable(w))
        std::fprintf(stderr, "publisher %d: FINISHED write failed (code %d)\n", opt.pid, static_cast<int>(w()));
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
    std::fprintf(stderr, "publisher %d: FINISHED acknowledged by all %d subscribers after %.2f s\n",
                 opt.pid, ns, static_cast<double>(now_ns() - fin_start) / 1e9);
  else if (!g_stop) {
    char miss[512];
    list_missing(acked, ns, miss, sizeof miss);
    std::fprintf(stderr,
                 "publisher %d: %d of %d subscribers acknowledged FINISHED (waited %.1f s%s): "
                 "missing %s\n",
                 opt.pid, count_true(acked, ns), ns, static_cast<double>(now_ns() - fin_start) / 1e9,
                 queued ? "" : "; the writer's history stayed full, a subscriber is not acknowledging",
                 miss);
    rc = 1;
  }
  if (opt.pid == 0) {
    if (lrd) lrd->set_listener(nullptr);
    {
      std::lock_guard<std::mutex> g(echo_take_m);  // a running listener call has finished
    }
    print_latency_summary();
  }
  pr_end();
  return rc;
}

// ---- subscriber --------------------------------------------------------------------------

struct {
  std::mutex m;
  std::vector<uint64_t> expected;  // next sequence number per publisher
  std::vector<char> seen;          // a sample of that publisher arrived: loss baseline set
  std::unique_ptr<std::atomic<int>[]> finished;
  int nfinished = 0;
  std::atomic<uint64_t> received{0}, lost{0}, echoes{0};
  std::atomic<int64_t> first_ns{0}, last_ns{0}, fin_ns{0};
  DataWriter *echo_wr = nullptr;
} sub;

// Echoes the echo writer could not take at once (its window full) are written by their
// own thread, never by blocking Fast DDS's receive thread.
struct {
  std::mutex m;
  std::condition_variable c;
  std::deque<TestData> q;
  bool stop = false;
  std::thread thread;
} eq;

void echo_thread()
{
  std::unique_lock<std::mutex> g(eq.m);
  for (;;) {
    eq.c.wait(g, [] { return !eq.q.empty() || eq.stop; });
    if (eq.q.empty()) break;  // stopped and drained
    TestData it = std::move(eq.q.front());
    eq.q.pop_front();
    g.unlock();
    ReturnCode_t rc;
    while (retryable(rc = sub.echo_wr->write(&it, HANDLE_NIL)) && !g_stop) sleep_ms(1);
    if (rc == ReturnCode_t::RETCODE_OK) sub.echoes++;
    else std::fprintf(stderr, "subscriber %d: echo failed (code %d)\n", opt.sid, static_cast<int>(rc()));
    g.lock();
  }
}

void on_data(DataReader *rd)
{
  static TestData s;
  SampleInfo info;
  std::lock_guard<std::mutex> g(sub.m);
  uint64_t got = 0, lost = 0;
  int64_t t = 0;
  while (rd->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
    t = now_ns();
    if (!info.valid_data || s.pub_id < 0 || s.pub_id >= opt.num_pubs) continue;
    size_t p = static_cast<size_t>(s.pub_id);
    if (s.kind == perftest::KIND_FINISHED) {
      // FINISHED carries the number of samples sent: a gap at the tail is lost too.
      uint64_t &e = sub.expected[p];
      if (!sub.finished[p].load()) {
        if (s.seq > e) {
          lost += s.seq - e;
          e = s.seq;
        }
        if (++sub.nfinished == opt.num_pubs) sub.fin_ns = t;
      }
      sub.finished[p].store(1);
      continue;
    }
    if (s.kind != perftest::KIND_DATA) continue;
    got++;
    uint64_t &e = sub.expected[p];
    // Perftest: the loss baseline is the first sequence number seen of each publisher.
    if (!sub.seen[p]) {
      sub.seen[p] = 1;
      e = s.seq;
    }
    if (s.seq > e) lost += s.seq - e;
    if (s.seq >= e) e = s.seq + 1;
    if (s.ping_to == opt.sid) {
      // Fast path: echo right here (the echo writer never blocks: max_blocking_time 0);
      // when its window is full, leave it to the echo thread, behind queued ones.
      s.kind = perftest::KIND_ECHO;
      s.sub_id = opt.sid;
      s.ping_to = -1;
      std::unique_lock<std::mutex> qg(eq.m);
      bool queued = !eq.q.empty();
      qg.unlock();
      if (!queued && sub.echo_wr->write(&s, HANDLE_NIL) == ReturnCode_t::RETCODE_OK) {
        sub.echoes++;
      } else {
        qg.lock();
        eq.q.push_back(s);
        eq.c.notify_one();
      }
    }
  }
  if (got) {
    int64_t zero = 0;
    sub.first_ns.compare_exchange_strong(zero, t);
    sub.last_ns = t;
    sub.received += got;
  }
  if (lost) sub.lost += lost;
}

void announce(DataWriter *w, int kind, int pub_id, const std::vector<uint8_t> *finished)
{
  Announcement a;
  a.sub_id = opt.sid;
  a.kind = kind;
  a.pub_id = pub_id;
  if (finished) a.finished = *finished;
  ReturnCode_t rc = w->write(&a, HANDLE_NIL);
  if (rc != ReturnCode_t::RETCODE_OK)
    std::fprintf(stderr, "subscriber %d: announcement failed (code %d)\n", opt.sid, static_cast<int>(rc()));
}

void sub_summary()
{
  uint64_t pk = sub.received, lost = sub.lost;
  int64_t end = sub.fin_ns != 0 ? sub.fin_ns.load() : sub.last_ns.load();
  pt_throughput_summary_t ti{};
  ti.length = opt.data_len;
  ti.packets = pk;
  ti.lost = lost;
  if (sub.first_ns != 0 && end > sub.first_ns)
    ti.time_us = static_cast<unsigned long long>((end - sub.first_ns) / 1000);
  ti.bytes = pk * static_cast<unsigned long long>(opt.data_len);
  ti.lost_percent = pk + lost ? static_cast<float>(static_cast<double>(lost) * 100.0 / static_cast<double>(pk + lost)) : 0.0f;
  ti.cpu = opt.cpu ? pr_cpu_average() : 0.0;
  pr_throughput_summary(&ti);
  pr_end();
  std::fprintf(stderr, "subscriber %d: received %" PRIu64 " samples, lost %" PRIu64 ", echoed %" PRIu64
                       " pings\n",
               opt.sid, pk, lost, sub.echoes.load());
}

WriterListener sub_echo_wl, sub_ann_wl;
ReaderListener sub_tp_l;

int run_subscriber()
{
  int np = opt.num_pubs;
  size_t npz = static_cast<size_t>(np);
  sub.expected.assign(npz, 0);
  sub.seen.assign(npz, 0);
  sub.finished.reset(new std::atomic<int>[npz]);
  for (size_t i = 0; i < npz; i++) sub.finished[i] = 0;
  std::vector<char> tp_v(npz), ann_v(npz), ok_v(npz), was_v(npz), acked_v(npz), gone_v(npz);
  bool *tp_m = reinterpret_cast<bool *>(tp_v.data()), *ann_m = reinterpret_cast<bool *>(ann_v.data());
  bool *ok = reinterpret_cast<bool *>(ok_v.data()), *was = reinterpret_cast<bool *>(was_v.data());
  bool *acked = reinterpret_cast<bool *>(acked_v.data()), *gone = reinterpret_cast<bool *>(gone_v.data());
  std::vector<uint8_t> fin_bits((npz + 7) / 8, 0);
  bool lat_m[1];

  DataWriterQos eqos = data_writer_qos("sub", opt.sid);
  if (!opt.best_effort) eqos.reliability().max_blocking_time = Duration_t(0, 0);
  if (opt.latency_test) {
    eqos.history().kind = KEEP_LAST_HISTORY_QOS;
    eqos.history().depth = 1;
  }
  sub.echo_wr = mk_writer(lat_topic, eqos, &sub_echo_wl);
  DataWriter *ann = mk_writer(ann_topic, ann_writer_qos(opt.sid), &sub_ann_wl);
  eq.thread = std::thread(echo_thread);
  sub_tp_l.on_data = on_data;
  DataReader *rd = mk_reader(tp_topic, data_reader_qos("sub", opt.sid, 0), &sub_tp_l);

  std::fprintf(stderr, "subscriber %d: waiting for %d publishers (timeout %g s)\n", opt.sid, np,
               opt.discovery_timeout);
  int64_t t0 = now_ns(), next_progress = t0 + 5000000000LL;
  bool complete = false;
  while (!g_stop) {
    int64_t t = now_ns();
    bool timed_out = t - t0 > static_cast<int64_t>(opt.discovery_timeout * 1e9);
    sub_tp_l.matched.ids("pub", tp_m, np);
    sub_ann_wl.matched.ids("pub", ann_m, np);
    sub_echo_wl.matched.ids("pub", lat_m, 1);
    for (int i = 0; i < np; i++) ok[i] = tp_m[i] && ann_m[i] && (i != 0 || lat_m[0]);
    if (count_true(ok, np) == np) {
      complete = true;
      break;
    }
    if (timed_out) break;
    if (t >= next_progress) {
      std::fprintf(stderr, "subscriber %d: %.0f s: matched %d of %d publishers\n", opt.sid,
                   since_start(), sub_tp_l.matched.count(), np);
      next_progress += 5000000000LL;
    }
    sleep_ms(np > 20 ? 200 : 20);
  }
  auto stop_echo_thread = [] {
    {
      std::lock_guard<std::mutex> g(eq.m);
      eq.stop = true;
      eq.c.notify_one();
    }
    if (eq.thread.joinable()) eq.thread.join();
  };
  if (!complete && !g_stop) {
    char miss[512];
    list_missing(ok, np, miss, sizeof miss);
    std::fprintf(stderr, "subscriber %d saw %d of %d publishers within %g s: missing %s\n",
                 opt.sid, count_true(ok, np), np, opt.discovery_timeout, miss);
    rd->set_listener(nullptr);
    stop_echo_thread();
    return 1;
  }
  if (complete) {
    std::fprintf(stderr, "subscriber %d: discovery complete: %d publishers after %.2f s (process start)\n",
                 opt.sid, np, since_start());
    announce(ann, perftest::ANN_READY, -1, nullptr);
    pr_begin();
    if (opt.cpu) pr_cpu_start();
  }
  std::memcpy(was, ok, sizeof(bool) * npz);

  // Receive loop: interval rows as Perftest (see the native agent's main.c).
  int rc = 0;
  int64_t t_announce = now_ns(), last_data_seen = t_announce;
  int64_t prev_t = t_announce, next_tick = t_announce + 1000000000LL;
  uint64_t prev_pk = 0, last_seen_pk = 0, ave_count = 0;
  double mps_ave = 0, bps_ave = 0;
  bool flowing = false, baseline = false;
  int64_t idle_limit = static_cast<int64_t>((opt.discovery_timeout + opt.finish_timeout) * 1e9);
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
          baseline = true;  // first tick that sees data: swallow the partial second
          prev_pk = pk;
          prev_t = t;
          mps_ave = bps_ave = 0;
          ave_count = 0;
        } else {
          uint64_t msgs = pk - prev_pk;
          unsigned long long delta_us = static_cast<unsigned long long>((t - prev_t) / 1000);
          if (delta_us == 0) delta_us = 1;
          unsigned long long mps = msgs * 1000000ULL / delta_us;
          unsigned long long bps = msgs * static_cast<unsigned long long>(opt.data_len) * 1000000ULL / delta_us;
          ave_count++;
          bps_ave += (static_cast<double>(bps) - bps_ave) / static_cast<double>(ave_count);
          mps_ave += (static_cast<double>(mps) - mps_ave) / static_cast<double>(ave_count);
          uint64_t lost = sub.lost;
          if (pk > 0) {
            pt_throughput_interval_t ti{};
            ti.packets = pk;
            ti.packets_per_s = mps;
            ti.bytes_per_s = bps;
            ti.lost = lost;
            ti.packets_ave = mps_ave;
            ti.bytes_ave = bps_ave;
            ti.lost_percent = static_cast<float>(static_cast<double>(lost) * 100.0 / static_cast<double>(pk + lost));
            ti.cpu = opt.cpu ? pr_cpu_instant() : 0.0;
            pr_throughput_interval(&ti);
          }
          prev_pk = pk;
          prev_t = t;
        }
      }
    }
    // FINISHED acknowledgements and vanished publishers (every ~0.25 s).
    if (++tick % 5 != 0) continue;
    int done = 0, newest = -1;
    sub_tp_l.matched.ids("pub", tp_m, np);
    for (int i = 0; i < np; i++) {
      if (sub.finished[static_cast<size_t>(i)].load()) {
        if (!acked[i]) {
          fin_bits[static_cast<size_t>(i) / 8] |= static_cast<uint8_t>(1u << (i % 8));
          acked[i] = true;
          newest = i;
        }
        done++;
      } else if (was[i] && !tp_m[i]) {
        gone[i] = true;
        done++;
      }
    }
    if (newest >= 0) announce(ann, perftest::ANN_FINISHED_ACK, newest, &fin_bits);
    if (done == np) break;
    if (t - last_data_seen > idle_limit) {
      char miss[512];
      for (int i = 0; i < np; i++) ok[i] = sub.finished[static_cast<size_t>(i)].load() != 0;
      list_missing(ok, np, miss, sizeof miss);
      std::fprintf(stderr, "subscriber %d: no data for %.0f s; publishers not finished: %s\n",
                   opt.sid, static_cast<double>(t - last_data_seen) / 1e9, miss);
      rc = 1;
      break;
    }
  }
  if (count_true(gone, np) > 0) {
    std::string miss;
    {
      std::lock_guard<std::mutex> g(sub.m);
      for (int i = 0; i < np && miss.size() < 480; i++)
        if (gone[i]) {
          char b[64];
          std::snprintf(b, sizeof b, "%s%d (%" PRIu64 " samples seen)", miss.empty() ? "" : ", ", i,
                        sub.expected[static_cast<size_t>(i)]);
          miss += b;
        }
    }
    std::fprintf(stderr, "subscriber %d: publishers vanished before FINISHED: %s\n", opt.sid,
                 miss.c_str());
    rc = 1;
  }
  rd->set_listener(nullptr);
  {
    std::lock_guard<std::mutex> g(sub.m);  // a running listener call has finished
  }
  stop_echo_thread();
  sub_summary();
  std::fprintf(stderr, "subscriber %d: receive loop ended at %.2f s\n", opt.sid, since_start());
  if (complete) ann->wait_for_acknowledgments(Duration_t(1, 0));
  return g_stop ? 0 : rc;
}

}  // namespace

#ifdef MCASTLAB_ASAN
// Fast DDS 2.9.1 itself deletes its statistics reader (StatisticsReaderImpl, 64 bytes) through
// an RTPSReader pointer of another size when a reader is deleted (ASan's report: allocated
// in StatisticsReaderImpl::StatisticsReaderImpl, freed in RTPSReader::~RTPSReader from
// DomainParticipantImpl::delete_contained_entities): a size mismatch inside the library,
// not in the agent. Only that check is off; every other ASan check stays on.
extern "C" const char *__asan_default_options() { return "new_delete_type_mismatch=0"; }
#endif

int main(int argc, char **argv)
{
  t_start = now_ns();
  // As the native agent: a fixed mmap threshold returns large receive buffers to the kernel.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  setvbuf(stdout, nullptr, _IOFBF, 1 << 16);
  pt_set_agent(PROG, "the Fast DDS agent", "eProsima Fast DDS", "perftest-wrappers/fastdds/README.md",
               "3, or 30% of -leaseDuration if shorter");
  pt_parse_options(argc, argv, &opt);
  // Fast DDS logs to stdout by default: stdout carries only Perftest's tables, so every
  // Fast DDS log message goes to stderr (errors and warnings).
  {
    auto consumer = std::make_unique<eprosima::fastdds::dds::StdoutErrConsumer>();
    consumer->stderr_threshold(eprosima::fastdds::dds::Log::Kind::Info);
    eprosima::fastdds::dds::Log::ClearConsumers();
    eprosima::fastdds::dds::Log::RegisterConsumer(std::move(consumer));
    eprosima::fastdds::dds::Log::SetVerbosity(eprosima::fastdds::dds::Log::Kind::Warning);
  }
  // Fast DDS 2.9 has no DDS-level write batching.
  if (opt.batch_size > 0) {
    std::fprintf(stderr, "%s: invalid value '%d' for -batchSize: Fast DDS %s has no write batching "
                         "(only -batchSize 0)\n", PROG, opt.batch_size, FASTRTPS_VERSION_STR);
    return 2;
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (opt.pub)
    std::fprintf(stderr,
                 "perftest_fastdds (Fast DDS %s): publisher %d, %d subscribers, dataLen %d, %s, "
                 "latencyCount %lld, numIter %lld, %s%s, domain %d\n",
                 FASTRTPS_VERSION_STR, opt.pid, opt.num_subs, opt.data_len,
                 opt.best_effort ? "best effort" : "strict reliable", opt.latency_count, opt.num_iter,
                 opt.latency_test ? "latency test" : "throughput test", opt.keyed ? ", keyed" : "",
                 opt.domain);
  else
    std::fprintf(stderr,
                 "perftest_fastdds (Fast DDS %s): subscriber %d, %d publishers, dataLen %d, %s%s, "
                 "domain %d\n",
                 FASTRTPS_VERSION_STR, opt.sid, opt.num_pubs, opt.data_len,
                 opt.best_effort ? "best effort" : "strict reliable", opt.keyed ? ", keyed" : "",
                 opt.domain);
  std::fprintf(stderr, "config: scale settings for %d participants (%s)%s\n", opt.est_participants,
               opt.total_participants_set ? "-totalParticipants"
               : opt.both_counts          ? "-numPublishers + -numSubscribers"
               : opt.pub ? "2 x -numSubscribers: Perftest gives a publisher only that count"
                         : "2 x -numPublishers: Perftest gives a subscriber only that count",
               pt_large_test(&opt) ? "; large test: DDS teardown skipped at exit" : "");
  if (opt.pub && !opt.latency_test && opt.exec_time > 0 && !opt.num_iter_set)
    std::fprintf(stderr, "config: the test ends after -executionTime %g s or -numIter %lld samples "
                         "(Perftest's default), whichever comes first\n",
                 opt.exec_time, opt.num_iter);
  if (opt.output_file) {
    std::fflush(stdout);
    if (std::freopen(opt.output_file, "a", stdout) == nullptr) {
      std::fprintf(stderr, "[PerftestPrinter] Error: Cannot open output file %s.\n", opt.output_file);
      return 2;
    }
    setvbuf(stdout, nullptr, _IOFBF, 1 << 16);
  }
  std::fprintf(stderr, "config: write batching off (Fast DDS has no write batching; synchronous "
                       "publication, one DATA submessage per sample)\n");
  if (!opt.best_effort)
    std::fprintf(stderr, "config: writer window %d samples (%s)\n", perftest::window_samples(opt),
                 opt.send_queue_size > 0 ? "-sendQueueSize"
                                         : "1 MiB receive buffer / (1 KiB x publishers), 16..1000");
  if (opt.multicast)
    std::fprintf(stderr, "config: multicast groups: Throughput %s, Latency %s, Announcement %s, TTL 32\n",
                 opt.mcast_addr[0], opt.mcast_addr[1], opt.mcast_addr[2]);
  pr_init(opt.format, opt.print_intervals, opt.print_headers, opt.cpu, opt.data_len);
  create_participant();
  int rc = opt.pub ? run_publisher() : run_subscriber();
  std::fflush(stdout);
  if (pt_large_test(&opt)) {
    // Large test: results printed, FINISHED exchange over; peers drop this participant by
    // its lease (as the native agent).
    std::fprintf(stderr, "%s %d: exit %d after %.2f s (large test: DDS teardown skipped)\n", role(),
                 my_id(), rc, since_start());
    std::fflush(stderr);
    _exit(rc);
  }
  dp->delete_contained_entities();
  DomainParticipantFactory::get_instance()->delete_participant(dp);
  std::fprintf(stderr, "%s %d: exit %d after %.2f s\n", role(), my_id(), rc, since_start());
  return rc;
}
