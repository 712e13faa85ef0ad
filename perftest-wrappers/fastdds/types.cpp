// Plain CDR (XCDR1) serialisation of the agent's types; see types.hpp for the layout.
#include "types.hpp"

#include <cstring>
#include <new>

#include <fastrtps/utils/md5.h>

using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;

namespace perftest {
namespace {

// Writes in the host's byte order and says so in the encapsulation header (CDR_LE on
// x86); reads either order.
constexpr bool HOST_LE = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

struct Writer {
  uint8_t *p;
  template <typename T> void put(T v)
  {
    std::memcpy(p, &v, sizeof v);
    p += sizeof v;
  }
};

struct Reader {
  const uint8_t *p, *end;
  bool swap;
  bool ok = true;
  template <typename T> T get()
  {
    T v{};
    if (end - p < static_cast<long>(sizeof v)) {
      ok = false;
      return v;
    }
    if (swap) {
      uint8_t b[sizeof v];
      for (size_t i = 0; i < sizeof v; i++) b[i] = p[sizeof v - 1 - i];
      std::memcpy(&v, b, sizeof v);
    } else {
      std::memcpy(&v, p, sizeof v);
    }
    p += sizeof v;
    return v;
  }
  bool bytes(std::vector<uint8_t> &out, uint32_t max)
  {
    uint32_t n = get<uint32_t>();
    if (!ok || n > max || static_cast<uint32_t>(end - p) < n) return ok = false;
    out.resize(n);
    if (n) std::memcpy(out.data(), p, n);
    p += n;
    return true;
  }
};

// One sample: the encapsulation header, the fixed fields (header_size bytes with the
// encapsulation and the sequence length), then the octet sequence seq.
template <typename Fields>
bool write_sample(SerializedPayload_t *payload, uint32_t header_size, const std::vector<uint8_t> &seq,
                  Fields fields)
{
  uint32_t n = static_cast<uint32_t>(seq.size());
  if (payload->max_size < header_size + n) return false;
  payload->encapsulation = HOST_LE ? CDR_LE : CDR_BE;
  payload->data[0] = 0;
  payload->data[1] = HOST_LE ? 1 : 0;
  payload->data[2] = payload->data[3] = 0;
  Writer w{payload->data + 4};
  fields(w);
  w.put(n);
  if (n) std::memcpy(w.p, seq.data(), n);
  payload->length = header_size + n;
  return true;
}

// The reverse: false on a bad header, a short payload or a sequence above max_seq octets.
template <typename Fields>
bool read_sample(const SerializedPayload_t *payload, uint32_t max_seq, std::vector<uint8_t> &seq,
                 Fields fields)
{
  if (payload->length < 4 || payload->data[0] != 0 || payload->data[1] > 1) return false;
  bool swap = (payload->data[1] == 1) != HOST_LE;
  Reader r{payload->data + 4, payload->data + payload->length, swap};
  fields(r);
  return r.ok && r.bytes(seq, max_seq);
}

}  // namespace

// ---- TestData_t ------------------------------------------------------------------------

TestDataType::TestDataType(bool keyed, uint32_t max_payload)
{
  setName(keyed ? "perftest::TestDataKeyed_t" : "perftest::TestData_t");
  m_typeSize = TEST_DATA_HEADER + max_payload;
  m_isGetKeyDefined = keyed;
  auto_fill_type_object(false);
  auto_fill_type_information(false);
}

std::function<uint32_t()> TestDataType::getSerializedSizeProvider(void *data)
{
  return [data]() {
    return TEST_DATA_HEADER + static_cast<uint32_t>(static_cast<TestData *>(data)->bin_data.size());
  };
}

bool TestDataType::serialize(void *data, SerializedPayload_t *payload)
{
  const TestData *s = static_cast<const TestData *>(data);
  return write_sample(payload, TEST_DATA_HEADER, s->bin_data, [s](Writer &w) {
    for (uint8_t k : s->key) w.put(k);
    w.put(s->entity_id);
    w.put(s->seq_num);
    w.put(s->timestamp_sec);
    w.put(s->timestamp_usec);
    w.put(s->latency_ping);
  });
}

bool TestDataType::deserialize(SerializedPayload_t *payload, void *data)
{
  TestData *s = static_cast<TestData *>(data);
  return read_sample(payload, m_typeSize - TEST_DATA_HEADER, s->bin_data, [s](Reader &r) {
    for (uint8_t &k : s->key) k = r.get<uint8_t>();
    s->entity_id = r.get<int32_t>();
    s->seq_num = r.get<uint32_t>();
    s->timestamp_sec = r.get<int32_t>();
    s->timestamp_usec = r.get<uint32_t>();
    s->latency_ping = r.get<int32_t>();
  });
}

void *TestDataType::createData() { return new (std::nothrow) TestData(); }

void TestDataType::deleteData(void *data) { delete static_cast<TestData *>(data); }

bool TestDataType::getKey(void *data, InstanceHandle_t *ihandle, bool force_md5)
{
  if (!m_isGetKeyDefined) return false;
  // The key as CDR serialises it for key hashes: the four octets as they are; at most 16
  // bytes, so it is the handle itself unless an MD5 hash is asked for (RTPS 9.6.3.8).
  const uint8_t *key = static_cast<const TestData *>(data)->key;
  for (int i = 0; i < 16; i++) ihandle->value[i] = 0;
  if (force_md5) {
    MD5 md5;
    md5.init();
    md5.update(key, 4);
    md5.finalize();
    for (int i = 0; i < 16; i++) ihandle->value[i] = md5.digest[i];
  } else {
    for (int i = 0; i < 4; i++) ihandle->value[i] = key[i];
  }
  return true;
}

// ---- Announcement_t --------------------------------------------------------------------

AnnouncementType::AnnouncementType(uint32_t max_publishers)
{
  setName("perftest::Announcement_t");
  m_typeSize = ANNOUNCEMENT_HEADER + (max_publishers + 7) / 8;
  m_isGetKeyDefined = false;
  auto_fill_type_object(false);
  auto_fill_type_information(false);
}

std::function<uint32_t()> AnnouncementType::getSerializedSizeProvider(void *data)
{
  return [data]() {
    return ANNOUNCEMENT_HEADER +
           static_cast<uint32_t>(static_cast<Announcement *>(data)->finished.size());
  };
}

bool AnnouncementType::serialize(void *data, SerializedPayload_t *payload)
{
  const Announcement *a = static_cast<const Announcement *>(data);
  return write_sample(payload, ANNOUNCEMENT_HEADER, a->finished, [a](Writer &w) {
    w.put(a->sub_id);
    w.put(a->kind);
    w.put(a->pub_id);
  });
}

bool AnnouncementType::deserialize(SerializedPayload_t *payload, void *data)
{
  Announcement *a = static_cast<Announcement *>(data);
  return read_sample(payload, m_typeSize - ANNOUNCEMENT_HEADER, a->finished, [a](Reader &r) {
    a->sub_id = r.get<int32_t>();
    a->kind = r.get<int32_t>();
    a->pub_id = r.get<int32_t>();
  });
}

void *AnnouncementType::createData() { return new (std::nothrow) Announcement(); }

void AnnouncementType::deleteData(void *data) { delete static_cast<Announcement *>(data); }

bool AnnouncementType::getKey(void *, InstanceHandle_t *, bool) { return false; }

}  // namespace perftest
