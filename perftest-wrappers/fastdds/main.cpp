// perftest_fastdds: RTI Perftest-compatible throughput/latency test on eProsima Fast DDS.
//
// The same contract as the native agent (perftest-wrappers/native: command line, protocol,
// output, role checks, exit statuses, bounded waits, SIGINT/SIGTERM summaries); the command
// line, the output tables and the protocol logic that does not touch DDS (bookkeeping,
// pacing, the reporting loop, messages) are the native agent's own code (options.c,
// printer.c, measure.c); this file holds the Fast DDS entities and lends them to measure.c.
//
// Topics (DDS partition "perftest"):
//   Throughput   publishers -> subscribers  data, pings (latency_ping >= 0) and FINISHED
//   Latency      subscribers -> publisher 0 echoes of pings (only publisher 0 reads it)
//   Announcement subscribers -> publishers  "ready" and "FINISHED received" (transient-local)
// Tables go to stdout (printer.c), configuration and progress to stderr.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
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
#include "effective.hpp"
#include "paths.hpp"
#include "measure.h"
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
DomainParticipant *dp;
Publisher *dpub;
Subscriber *dsub;
Topic *tp_topic, *lat_topic, *ann_topic;
perftest::AgentConfig cfg;

// Exits without running destructors: Fast DDS's threads may still be running.
[[noreturn]] void fatal(const char *what)
{
  std::fprintf(stderr, "%s %d: %s failed\n", ms_role(), ms_id(), what);
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
  q.reliable_writer_qos().times.nackResponseDelay = Duration_t(0, 0);  // Perftest: repairs at once
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
  if (topic == 0) {
    // Perftest's ThroughputQos reader (perftest_qos.h): heartbeats answered at once, its limits.
    q.reliable_reader_qos().times.heartbeatResponseDelay = Duration_t(0, 0);
    q.resource_limits().max_samples = PT_READER_MAX_SAMPLES;
    q.resource_limits().allocated_samples = PT_READER_INITIAL_SAMPLES;
    q.reader_resource_limits().max_samples_per_read = PT_READER_MAX_SAMPLES_PER_READ;
  }
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
  std::snprintf(name, sizeof name, "perftest_fastdds %s %d", ms_role(), ms_id());
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

// ---- publisher ---------------------------------------------------------------------------

// Publisher 0's -latencyTest pings: the template sample (read-only once the test starts).
struct {
  DataWriter *wr = nullptr;
  TestData s;
} ping;

void send_ping(const ms_ping_t *p, void *)
{
  TestData x = ping.s;
  x.seq_num = static_cast<uint32_t>(p->seq);
  x.latency_ping = p->ping_to;
  ms_ts_to_wire(p->ts, &x.timestamp_sec, &x.timestamp_usec);
  ReturnCode_t rc = ping.wr->write(&x, HANDLE_NIL);
  if (rc != ReturnCode_t::RETCODE_OK && rc != ReturnCode_t::RETCODE_TIMEOUT)
    std::fprintf(stderr, "publisher 0: ping write failed (code %d)\n", static_cast<int>(rc()));
}

std::mutex echo_take_m;  // Fast DDS may call the listener from several receive threads

void on_echo(DataReader *rd)
{
  std::lock_guard<std::mutex> take_guard(echo_take_m);
  static TestData s;
  SampleInfo info;
  while (rd->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
    int64_t t = ms_now_ns();
    if (info.valid_data)
      ms_latency_echo(t, ms_ts_from_wire(s.timestamp_sec, s.timestamp_usec), s.entity_id, s.seq_num);
  }
}

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

// One flag per peer (std::vector<bool> has no bool *).
using Flags = std::unique_ptr<bool[]>;
Flags flags(int n) { return Flags(new bool[static_cast<size_t>(n)]()); }

// The publisher's entities and discovery state, lent to measure.c.
struct PubCtx {
  DataWriter *wr = nullptr;
  DataReader *ann = nullptr, *lrd = nullptr;  // lrd: the Latency reader (publisher 0)
  Flags ready, acked, tp_m, lat_m;
  TestData *fin = nullptr;
};

void pub_fill(bool *ok, bool, void *ctx)
{
  PubCtx &p = *static_cast<PubCtx *>(ctx);
  int ns = opt.num_subs;
  poll_announcements(p.ann, p.ready.get(), p.acked.get());
  pub_wl.matched.ids("sub", p.tp_m.get(), ns);
  if (p.lrd) pub_lat_l.matched.ids("sub", p.lat_m.get(), ns);
  for (int i = 0; i < ns; i++) ok[i] = p.ready[i] && p.tp_m[i] && (p.lrd == nullptr || p.lat_m[i]);
}

void pub_progress(void *ctx)
{
  PubCtx &p = *static_cast<PubCtx *>(ctx);
  std::fprintf(stderr, "publisher %d: %.0f s: %d of %d subscribers announced, %d matched\n", opt.pid,
               ms_since_start(), ms_count_true(p.ready.get(), opt.num_subs), opt.num_subs,
               pub_wl.matched.count());
}

int pub_write_finished(void *ctx)
{
  PubCtx &p = *static_cast<PubCtx *>(ctx);
  ReturnCode_t w = p.wr->write(p.fin, HANDLE_NIL);
  if (w == ReturnCode_t::RETCODE_OK) return 1;
  if (retryable(w)) return 0;
  std::fprintf(stderr, "publisher %d: FINISHED write failed (code %d)\n", opt.pid, static_cast<int>(w()));
  return -1;
}

void pub_poll(void *ctx)
{
  PubCtx &p = *static_cast<PubCtx *>(ctx);
  poll_announcements(p.ann, p.ready.get(), p.acked.get());
}

int run_publisher()
{
  int ns = opt.num_subs;
  PubCtx p;
  p.ready = flags(ns);
  p.acked = flags(ns);
  p.tp_m = flags(ns);
  p.lat_m = flags(ns);
  Flags ok = flags(ns);
  ms_latency_init();

  DataWriterQos wq = data_writer_qos("pub", opt.pid);
  // Latency test: one ping outstanding at a time, so KEEP_LAST 1 loses nothing and the
  // writer never blocks (the next ping is written from the echo listener).
  if (opt.latency_test && !opt.best_effort) {
    wq.history().kind = KEEP_LAST_HISTORY_QOS;
    wq.history().depth = 1;
  }
  p.wr = mk_writer(tp_topic, wq, &pub_wl);
  {
    DataWriterQos eff;
    DomainParticipantQos pq;
    p.wr->get_qos(eff);
    dp->get_qos(pq);
    perftest::report_qos(opt, pq, &eff, nullptr);
  }
  p.ann = mk_reader(ann_topic, ann_reader_qos(opt.pid), &pub_ann_l);
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
    p.lrd = mk_reader(lat_topic, data_reader_qos("pub", opt.pid, 1), &pub_lat_l);
  }

  bool complete = ms_wait_discovery(ns, ok.get(), pub_fill, pub_progress, &p);
  if (!ms_pub_discovered(complete, ok.get(), p.ready.get(), p.tp_m.get(), p.lrd ? p.lat_m.get() : nullptr))
    return 1;

  // Send loop.
  TestData s;
  s.entity_id = opt.pid;
  s.bin_data.assign(static_cast<size_t>(opt.data_len - PT_OVERHEAD_BYTES), 0);
  uint64_t seq = 0, pings = 0;
  ms_pace_t pace;
  ms_pace_init(&pace);
  int rc = 0;
  if (opt.latency_test) {
    ping.wr = p.wr;
    ping.s = s;
    seq = pings = ms_latency_test(pace.t_end, send_ping, nullptr);
  }
  while (!ms_stop && !opt.latency_test) {
    if (!ms_pace_next(&pace, seq)) break;
    ms_sample_t plan = ms_sample_plan(seq, pings);
    s.seq_num = static_cast<uint32_t>(seq);
    if (opt.keyed) ms_key_to_wire(plan.key, s.key);
    s.latency_ping = plan.ping_to;
    if (plan.ping) ms_ts_to_wire(ms_now_ns(), &s.timestamp_sec, &s.timestamp_usec);
    ReturnCode_t w;
    // A blocked writer (peers lagging) retries, but not past the end of the test.
    while (retryable(w = p.wr->write(&s, HANDLE_NIL)) && !ms_stop && ms_now_ns() < pace.t_end) {
    }
    if (retryable(w)) break;
    if (w != ReturnCode_t::RETCODE_OK) {
      std::fprintf(stderr, "publisher %d: write failed (code %d)\n", opt.pid, static_cast<int>(w()));
      rc = 1;
      break;
    }
    if (plan.ping) pings++;
    seq++;
  }
  ms_print_sent(seq, pings, &pace);

  // FINISHED exchange: bounded wait, reset by progress (measure.c).
  s.latency_ping = MS_PING_FINISHED;
  s.seq_num = static_cast<uint32_t>(seq);  // the number of samples sent
  p.fin = &s;
  if (ms_pub_finish(p.acked.get(), pub_write_finished, pub_poll, &p) != 0) rc = 1;
  if (opt.pid == 0) {
    if (p.lrd) p.lrd->set_listener(nullptr);
    {
      std::lock_guard<std::mutex> g(echo_take_m);  // a running listener call has finished
    }
    ms_latency_summary();
  }
  pr_end();
  return rc;
}

// ---- subscriber --------------------------------------------------------------------------

DataWriter *echo_wr;

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
    while (retryable(rc = echo_wr->write(&it, HANDLE_NIL)) && !ms_stop) ms_sleep_ms(1);
    if (rc == ReturnCode_t::RETCODE_OK) ms_sub_echoed();
    else std::fprintf(stderr, "subscriber %d: echo failed (code %d)\n", opt.sid, static_cast<int>(rc()));
    g.lock();
  }
}

// Samples by origin: from writers on this host, as Fast DDS itself decides it (bytes 2 and
// 3 of a GUID prefix are the participant's host id, RTPSDomain.cpp), or from other hosts.
// Shared memory can carry only the first; the runner sets them beside the kernel's counters
// of each path.
uint64_t samples_same_host = 0, samples_other_hosts = 0;  // guarded as on_data's sample

bool from_this_host(const SampleInfo &info)
{
  const auto &mine = dp->guid().guidPrefix.value;
  return info.publication_handle.value[2] == mine[2] && info.publication_handle.value[3] == mine[3];
}

void on_data(DataReader *rd)
{
  static TestData s;  // guarded by measure.c's lock (ms_sub_begin .. ms_sub_end)
  SampleInfo info;
  ms_batch_t b;
  ms_sub_begin(&b, 0);
  while (rd->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
    b.t = ms_now_ns();
    if (!info.valid_data) continue;
    ++(from_this_host(info) ? samples_same_host : samples_other_hosts);
    if (!ms_sub_sample(&b, s.entity_id, s.latency_ping, s.seq_num)) continue;
    if (s.latency_ping == opt.sid) {
      // Fast path: echo right here (the echo writer never blocks: max_blocking_time 0);
      // when its window is full, leave it to the echo thread, behind queued ones.
      s.entity_id = opt.sid;
      s.latency_ping = MS_PING_NONE;
      std::unique_lock<std::mutex> qg(eq.m);
      bool queued = !eq.q.empty();
      qg.unlock();
      if (!queued && echo_wr->write(&s, HANDLE_NIL) == ReturnCode_t::RETCODE_OK) {
        ms_sub_echoed();
      } else {
        qg.lock();
        eq.q.push_back(s);
        eq.c.notify_one();
      }
    }
  }
  ms_sub_end(&b);
}

// finished: bitmap of the publishers whose FINISHED arrived (nullptr for ANN_READY).
void announce(DataWriter *w, int kind, int pub_id, const uint8_t *finished, uint32_t len)
{
  Announcement a;
  a.sub_id = opt.sid;
  a.kind = kind;
  a.pub_id = pub_id;
  if (finished) a.finished.assign(finished, finished + len);
  ReturnCode_t rc = w->write(&a, HANDLE_NIL);
  if (rc != ReturnCode_t::RETCODE_OK)
    std::fprintf(stderr, "subscriber %d: announcement failed (code %d)\n", opt.sid, static_cast<int>(rc()));
}

WriterListener sub_echo_wl, sub_ann_wl;
ReaderListener sub_tp_l;

// The subscriber's entities and discovery state, lent to measure.c.
struct SubCtx {
  DataWriter *ann = nullptr;
  Flags tp_m, ann_m;
  bool lat_m[1] = {false};
};

void sub_fill(bool *ok, bool, void *ctx)
{
  SubCtx &p = *static_cast<SubCtx *>(ctx);
  int np = opt.num_pubs;
  sub_tp_l.matched.ids("pub", p.tp_m.get(), np);
  sub_ann_wl.matched.ids("pub", p.ann_m.get(), np);
  sub_echo_wl.matched.ids("pub", p.lat_m, 1);
  for (int i = 0; i < np; i++) ok[i] = p.tp_m[i] && p.ann_m[i] && (i != 0 || p.lat_m[0]);
}

void sub_progress(void *)
{
  std::fprintf(stderr, "subscriber %d: %.0f s: matched %d of %d publishers\n", opt.sid,
               ms_since_start(), sub_tp_l.matched.count(), opt.num_pubs);
}

void sub_matched(bool *tp_m, const bool *, void *) { sub_tp_l.matched.ids("pub", tp_m, opt.num_pubs); }

void sub_ack(int newest, const uint8_t *bits, uint32_t len, void *ctx)
{
  announce(static_cast<SubCtx *>(ctx)->ann, perftest::ANN_FINISHED_ACK, newest, bits, len);
}

int run_subscriber()
{
  int np = opt.num_pubs;
  ms_sub_init();
  SubCtx p;
  p.tp_m = flags(np);
  p.ann_m = flags(np);
  Flags ok = flags(np), was = flags(np);

  DataWriterQos eqos = data_writer_qos("sub", opt.sid);
  if (!opt.best_effort) eqos.reliability().max_blocking_time = Duration_t(0, 0);
  if (opt.latency_test) {
    eqos.history().kind = KEEP_LAST_HISTORY_QOS;
    eqos.history().depth = 1;
  }
  echo_wr = mk_writer(lat_topic, eqos, &sub_echo_wl);
  p.ann = mk_writer(ann_topic, ann_writer_qos(opt.sid), &sub_ann_wl);
  eq.thread = std::thread(echo_thread);
  sub_tp_l.on_data = on_data;
  DataReader *rd = mk_reader(tp_topic, data_reader_qos("sub", opt.sid, 0), &sub_tp_l);
  {
    DataReaderQos eff;
    DomainParticipantQos pq;
    rd->get_qos(eff);
    dp->get_qos(pq);
    perftest::report_qos(opt, pq, nullptr, &eff);
  }

  bool complete = ms_wait_discovery(np, ok.get(), sub_fill, sub_progress, &p);
  auto stop_echo_thread = [] {
    {
      std::lock_guard<std::mutex> g(eq.m);
      eq.stop = true;
      eq.c.notify_one();
    }
    if (eq.thread.joinable()) eq.thread.join();
  };
  if (!ms_sub_discovered(complete, ok.get())) {
    rd->set_listener(nullptr);
    stop_echo_thread();
    return 1;
  }
  if (complete) {
    announce(p.ann, perftest::ANN_READY, -1, nullptr, 0);
    ms_begin_tables();
  }
  std::memcpy(was.get(), ok.get(), sizeof(bool) * static_cast<size_t>(np));

  int rc = ms_sub_receive(complete, was.get(), sub_matched, sub_ack, &p);
  rd->set_listener(nullptr);
  {
    ms_batch_t none;  // an empty batch: waits for a running listener call to finish
    ms_sub_begin(&none, 0);
    ms_sub_end(&none);
  }
  stop_echo_thread();
  ms_sub_summary();
  {
    const auto &mine = dp->guid().guidPrefix.value;
    std::fprintf(stderr, "subscriber %d: samples by origin: same host %llu, other hosts %llu "
                         "(Fast DDS host id %02x%02x)\n", opt.sid,
                 static_cast<unsigned long long>(samples_same_host),
                 static_cast<unsigned long long>(samples_other_hosts), mine[3], mine[2]);
    perftest::PathCounts pc = perftest::path_counts();
    std::fprintf(stderr, "subscriber %d: user DATA received by path: shared memory %llu, UDP from "
                         "this host %llu, UDP from other hosts %llu\n", opt.sid,
                 static_cast<unsigned long long>(pc.shm),
                 static_cast<unsigned long long>(pc.udp_this_host),
                 static_cast<unsigned long long>(pc.udp_other_hosts));
  }
  if (complete) p.ann->wait_for_acknowledgments(Duration_t(1, 0));
  return ms_stop ? 0 : rc;
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
  ms_init(&opt);  // as the native agent: a fixed mmap threshold returns large receive buffers
  pt_set_agent(PROG, "the Fast DDS agent", "eProsima Fast DDS", "perftest-wrappers/fastdds/README.md",
               "3, or 30% of -leaseDuration if shorter");
  pt_set_shmem(nullptr);  // Fast DDS has a shared-memory transport: Perftest's default applies
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
  // Fast DDS 2.9 has no DDS-level write batching: only an explicit -batchSize 0 (or one that
  // Perftest's rule turns off, below 2 x -dataLen); by default Perftest's unbatched window.
  if (opt.batch_size_set && opt.batch_size > 0) {
    std::fprintf(stderr, "%s: invalid value '%d' for -batchSize: Fast DDS %s has no write batching "
                         "(only -batchSize 0)\n", PROG, opt.batch_size, FASTRTPS_VERSION_STR);
    return 2;
  }
  if (opt.scale_discovery) {
    std::fprintf(stderr, "%s: -scaleDiscovery is the Cyclone DDS agent's: Fast DDS sets heartbeats "
                         "per writer, so its writers keep Perftest's timing at every count (use "
                         "neither, or -scaleSettings)\n", PROG);
    return 2;
  }
  if (opt.first_nack_resend) {
    std::fprintf(stderr, "%s: -multicastResendOnFirstNack is the Cyclone DDS agent's: Fast DDS %s "
                         "has no multicast resend setting\n", PROG, FASTRTPS_VERSION_STR);
    return 2;
  }
  ms_install_signals();
  opt.batch_size = 0;
  char scale[160];
  std::snprintf(scale, sizeof scale, "on (-scaleSettings): heartbeat period %.2f s for every writer",
                perftest::heartbeat_period_s(opt));
  ms_print_startup(PROG, "Fast DDS", FASTRTPS_VERSION_STR,
                   opt.scale_settings && pt_large_test(&opt) ? scale : nullptr);
  if (ms_open_output_file() != 0) return 2;
  std::fprintf(stderr, "config: write batching off (Fast DDS has no write batching; synchronous "
                       "publication, one DATA submessage per sample)\n");
  if (opt.pub)
    std::fprintf(stderr, "config: send window %lld samples (-sendQueueSize; Perftest's window without "
                         "batching)\n", pt_window_samples(&opt));
  ms_print_multicast();
  std::fprintf(stderr, "config: transport %s%s\n", pt_transport_name(&opt),
               opt.transport == PT_TRANSPORT_DEFAULT ? " (Perftest's default)" : "");
  pr_init(opt.format, opt.print_intervals, opt.print_headers, opt.cpu, opt.data_len);
  create_participant();
  int rc = opt.pub ? run_publisher() : run_subscriber();
  ms_exit_if_no_teardown(rc);  // a large or signalled test leaves here (measure.c)
  dp->delete_contained_entities();
  DomainParticipantFactory::get_instance()->delete_participant(dp);
  ms_print_exit(rc);
  return rc;
}
