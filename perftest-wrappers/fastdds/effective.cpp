// The Fast DDS agent's effective QoS in the terms of Perftest's ThroughputQos (effective.hpp):
// the QoS read back from the Throughput writer or reader and the participant, and the
// sockets' buffers as the kernel reports them.
#include "effective.hpp"

#include <cstdio>
#include <memory>
#include <string>

#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>

#include "measure.h"

using namespace eprosima::fastdds::dds;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;

namespace perftest {
namespace {

std::string ms_text(const eprosima::fastrtps::Duration_t &d)
{
  if (d == eprosima::fastrtps::c_TimeInfinite) return "infinite";
  char b[32];
  std::snprintf(b, sizeof b, "%g ms", static_cast<double>(d.to_ns()) / 1e6);
  return b;
}

std::string history(const HistoryQosPolicy &h)
{
  return h.kind == KEEP_ALL_HISTORY_QOS ? "KEEP_ALL" : "KEEP_LAST " + std::to_string(h.depth);
}

std::string limit(int32_t v) { return v <= 0 ? std::string("unlimited") : std::to_string(v); }

void writer_lines(const pt_options_t &o, const DataWriterQos &q)
{
  bool reliable = q.reliability().kind == RELIABLE_RELIABILITY_QOS;
  ms_qos("writer.reliability", reliable ? "RELIABLE" : "BEST_EFFORT", "read back from the writer");
  ms_qos("writer.history", history(q.history()).c_str(), "read back from the writer");
  if (reliable)
    ms_qos("writer.max_blocking_time", "infinite",
           "write waits of %s, repeated until the test ends: no sample is dropped",
           ms_text(q.reliability().max_blocking_time).c_str());
  ms_qos("writer.batching", "off", "Fast DDS 2.9 has no write batching: one DATA per write");
  if (!reliable || q.history().kind != KEEP_ALL_HISTORY_QOS) {
    ms_qos("writer.send_window", "none", "not a reliable KEEP_ALL writer");
  } else {
    std::string w = std::to_string(q.resource_limits().max_samples) + " samples";
    ms_qos("writer.send_window", w.c_str(),
           "resource_limits.max_samples of the KEEP_ALL history: a write blocks while it is "
           "full and goes on as soon as one sample is acknowledged (-sendQueueSize %d)",
           pt_send_queue_size(&o));
  }
  ms_qos("writer.high_watermark", "none",
         "Fast DDS has no watermarks: one heartbeat period, and a heartbeat piggybacked on "
         "every write while the history is full");
  ms_qos("writer.low_watermark", "none", "as high_watermark");
  ms_qos("writer.heartbeats_per_max_samples", "none",
         "Fast DDS piggybacks a heartbeat when the history is full and once per socket send "
         "buffer of data (StatefulWriter::send_heartbeat_piggyback_nts_)");
  ms_qos("writer.heartbeat_period", ms_text(q.reliable_writer_qos().times.heartbeatPeriod).c_str(),
         "reliable_writer_qos.times.heartbeatPeriod");
  ms_qos("writer.fast_heartbeat_period", "none", "no faster heartbeat in Fast DDS 2.9");
  ms_qos("writer.late_joiner_heartbeat_period", "none",
         "Fast DDS has no separate late-joiner heartbeat; Throughput is volatile");
  ms_qos("writer.max_heartbeat_retries", "unlimited",
         "Fast DDS keeps heartbeating a reliable reader that does not acknowledge");
  std::string nack = ms_text(q.reliable_writer_qos().times.nackResponseDelay);
  ms_qos("writer.min_nack_response_delay", nack.c_str(), "reliable_writer_qos.times.nackResponseDelay");
  ms_qos("writer.max_nack_response_delay", nack.c_str(), "as min_nack_response_delay");
  ms_qos("writer.multicast_periodic_heartbeat", "unknown",
         "Fast DDS 2.9 has no such setting; where its periodic heartbeats go is not measured here");
  ms_qos("writer.multicast_resend_threshold", "none",
         "Fast DDS 2.9 has no multicast resend setting (the agent refuses "
         "-multicastResendOnFirstNack)");
}

void reader_lines(const DataReaderQos &q)
{
  ms_qos("reader.reliability", q.reliability().kind == RELIABLE_RELIABILITY_QOS ? "RELIABLE" : "BEST_EFFORT",
         "read back from the reader");
  ms_qos("reader.history", history(q.history()).c_str(), "read back from the reader");
  std::string d = ms_text(q.reliable_reader_qos().times.heartbeatResponseDelay);
  ms_qos("reader.min_heartbeat_response_delay", d.c_str(),
         "reliable_reader_qos.times.heartbeatResponseDelay");
  ms_qos("reader.max_heartbeat_response_delay", d.c_str(), "as min_heartbeat_response_delay");
  const auto &rl = q.resource_limits();
  ms_qos("reader.max_samples", limit(rl.max_samples).c_str(), "read back from the reader");
  ms_qos("reader.max_samples_per_instance", limit(rl.max_samples_per_instance).c_str(),
         "read back from the reader");
  ms_qos("reader.initial_samples", std::to_string(rl.allocated_samples).c_str(),
         "resource_limits.allocated_samples");
  ms_qos("reader.max_samples_per_remote_writer", limit(rl.max_samples).c_str(),
         "no per-writer limit in Fast DDS: max_samples bounds every writer's samples, as it "
         "does in Perftest, whose per-writer limit equals it");
  ms_qos("reader.max_samples_per_read", limit(q.reader_resource_limits().max_samples_per_read).c_str(),
         "reader_resource_limits; the listener takes one sample at a time until the reader is empty");
}

}  // namespace

void report_qos(const pt_options_t &o, const DomainParticipantQos &pq, const DataWriterQos *wq,
                const DataReaderQos *rq)
{
  ms_qos_heading("Fast DDS", "perftest-wrappers/fastdds/README.md");
  if (wq) writer_lines(o, *wq);
  if (rq) reader_lines(*rq);
  std::shared_ptr<UDPv4TransportDescriptor> udp;
  for (const auto &t : pq.transport().user_transports)
    if (auto u = std::dynamic_pointer_cast<UDPv4TransportDescriptor>(t)) udp = u;
  std::string recv_how = "no UDPv4 transport", send_how = recv_how;
  if (udp) {
    recv_how = "UDPv4 receiveBufferSize " + std::to_string(udp->receiveBufferSize) + " B";
    send_how = "UDPv4 sendBufferSize " + std::to_string(udp->sendBufferSize) + " B";
  }
  ms_qos_socket_buffers(recv_how.c_str(), send_how.c_str());
  std::string mms = udp ? std::to_string(udp->maxMessageSize) + " B" : "none";
  ms_qos("transport.message_size_max", mms.c_str(),
         "UDPv4 maxMessageSize: the largest datagram; a larger sample is sent as DATA_FRAG "
         "fragments of up to this size");
}

}  // namespace perftest
