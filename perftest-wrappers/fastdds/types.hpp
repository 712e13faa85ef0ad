// Type support of the Fast DDS agent, written by hand: the layout of the native agent's
// perftest-wrappers/native/perftest.idl (plain CDR, XCDR1), which is RTI Perftest's
// TestData_t, registered under the same type names. fastddsgen is not packaged in Debian or
// Ubuntu, and dynamic types would build every sample through DynamicData (a heap-allocated
// member tree per sample, serialised member by member), a cost the native agent's generated
// code does not have; these types are a 4-octet key, five 32-bit fields and an octet
// sequence, so hand-written serialisation is short and checked in tests/agents (the agent's
// own samples round-trip through it).
#pragma once

#include <cstdint>
#include <vector>

#include <fastdds/dds/topic/TopicDataType.hpp>

namespace perftest {

enum { ANN_READY = 0, ANN_FINISHED_ACK = 1 };

// perftest::TestData_t / TestDataKeyed_t (the key annotation is the only difference); what
// each field carries: perftest.idl (latency_ping: MS_PING_NONE, MS_PING_FINISHED or a
// subscriber's id, measure.h).
struct TestData {
  uint8_t key[4] = {0, 0, 0, 0};
  int32_t entity_id = 0;
  uint32_t seq_num = 0;
  int32_t timestamp_sec = 0;
  uint32_t timestamp_usec = 0;
  int32_t latency_ping = -1;
  std::vector<uint8_t> bin_data;
};

// perftest::Announcement_t: bit i of `finished` set for every publisher i whose FINISHED the
// subscriber has received.
struct Announcement {
  int32_t sub_id = 0, kind = ANN_READY, pub_id = -1;
  std::vector<uint8_t> finished;
};

// Serialised sizes (4-byte encapsulation header included): TestData is 32 bytes plus the
// payload (the key octets, five 32-bit fields, the sequence length: Perftest's 28 octets of
// overhead, then the octets); Announcement is 20 bytes plus the bitmap.
constexpr uint32_t TEST_DATA_HEADER = 32;
constexpr uint32_t ANNOUNCEMENT_HEADER = 20;

class TestDataType : public eprosima::fastdds::dds::TopicDataType {
 public:
  // max_payload: the largest bin_data this process sends or receives (-dataLen - 28).
  TestDataType(bool keyed, uint32_t max_payload);
  bool serialize(void *data, eprosima::fastrtps::rtps::SerializedPayload_t *payload) override;
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t *payload, void *data) override;
  std::function<uint32_t()> getSerializedSizeProvider(void *data) override;
  void *createData() override;
  void deleteData(void *data) override;
  bool getKey(void *data, eprosima::fastrtps::rtps::InstanceHandle_t *ihandle,
              bool force_md5 = false) override;
};

class AnnouncementType : public eprosima::fastdds::dds::TopicDataType {
 public:
  // max_publishers: the largest bitmap accepted is (max_publishers + 7) / 8 bytes.
  explicit AnnouncementType(uint32_t max_publishers);
  bool serialize(void *data, eprosima::fastrtps::rtps::SerializedPayload_t *payload) override;
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t *payload, void *data) override;
  std::function<uint32_t()> getSerializedSizeProvider(void *data) override;
  void *createData() override;
  void deleteData(void *data) override;
  bool getKey(void *data, eprosima::fastrtps::rtps::InstanceHandle_t *ihandle,
              bool force_md5 = false) override;
};

}  // namespace perftest
