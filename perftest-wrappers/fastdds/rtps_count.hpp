// The user DATA in one RTPS message, for the path counter (paths.cpp): DATA submessages and
// first DATA_FRAG fragments of user-defined writers. Header-only and free of Fast DDS, so
// the tests compile it alone (tests/agents/test_fastdds_paths.py).
//
// A submessage's octetsToNextHeader of 0 means "up to the end of the message" for every
// submessage except PAD and INFO_TS, for which it means no body at all (RTPS 2.x,
// "SubmessageHeader"; an INFO_TS with the invalidate flag is always sent so): a DATA after a
// zero-length INFO_TS is the next submessage, not part of the INFO_TS.
#pragma once

#include <cstdint>
#include <cstring>

namespace perftest {
namespace rtps {

inline uint16_t rd16(const unsigned char *p, bool le)
{
  return static_cast<uint16_t>(le ? (p[0] | p[1] << 8) : (p[0] << 8 | p[1]));
}

inline uint32_t rd32(const unsigned char *p, bool le)
{
  return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
            : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

// A user-defined writer: entityKind 0x02 (keyed) or 0x03 (no key), not builtin (0xC_).
inline bool user_writer(const unsigned char *entity_id)
{
  return entity_id[3] == 0x02 || entity_id[3] == 0x03;
}

constexpr unsigned char PAD = 0x01, INFO_TS = 0x09, DATA = 0x15, DATA_FRAG = 0x16;

}  // namespace rtps

// User DATA submessages (and first DATA_FRAG fragments) in one RTPS message of `size` bytes.
inline unsigned user_data_submessages(const unsigned char *msg, uint32_t size)
{
  using namespace rtps;
  if (size < 20 || std::memcmp(msg, "RTPS", 4) != 0) return 0;
  unsigned n = 0;
  uint32_t at = 20;
  while (at + 4 <= size) {
    const unsigned char *sm = msg + at;
    const bool le = sm[1] & 1;
    const uint32_t len = rd16(sm + 2, le);
    const uint32_t body = at + 4;
    const bool no_body_when_zero = sm[0] == PAD || sm[0] == INFO_TS;
    const uint32_t next = (len || no_body_when_zero) ? body + len : size;
    if (next > size) break;
    const uint32_t body_len = next - body;
    if (sm[0] == DATA && body_len >= 20 && user_writer(msg + body + 8)) n++;
    if (sm[0] == DATA_FRAG && body_len >= 24 && user_writer(msg + body + 8) &&
        rd32(msg + body + 20, le) == 1)
      n++;
    at = next;
  }
  return n;
}

}  // namespace perftest
