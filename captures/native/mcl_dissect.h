/* mcastlab wire dissector: pcap/pcapng -> columnar records (frames, RTPS submessages,
 * IGMP/PIM control messages, SEDP topics). The Python side (captures/dissect.py) mirrors
 * these structs as numpy structured dtypes: keep the two in sync (MCL_ABI_VERSION). */
#ifndef MCL_DISSECT_H
#define MCL_DISSECT_H

#include <stddef.h>
#include <stdint.h>

#define MCL_ABI_VERSION 6

/* frame flags */
#define MCL_F_IPV4 0x01u
#define MCL_F_FRAG 0x02u      /* this frame is an IPv4 fragment */
#define MCL_F_REASM 0x04u     /* a datagram was completed (reassembled) in this frame */
#define MCL_F_MCAST 0x08u     /* IPv4 destination is multicast (224/4) */
#define MCL_F_SNAPCUT 0x10u   /* caplen < original length */
#define MCL_F_BAD 0x20u       /* counted under a bad reason */
#define MCL_F_PIMREG 0x40u    /* datagram was carried inside a PIM Register */

/* frame kinds (the payload that was decoded in this frame) */
enum { MCL_K_OTHER = 0, MCL_K_RTPS = 1, MCL_K_IGMP = 2, MCL_K_PIM = 3, MCL_K_UDP = 4, MCL_K_NONIP = 5,
       MCL_K_ICMP = 6 };

typedef struct {
    double ts;
    uint32_t wirelen;
    uint32_t caplen;
    uint32_t src, dst;      /* IPv4, host order (0 if not IPv4) */
    uint16_t sport, dport;  /* UDP ports of the datagram completed here */
    uint32_t l4len;         /* UDP payload length of the datagram completed here */
    uint16_t ipid;
    uint16_t nfrags;        /* fragments of the datagram completed here (0: not fragmented) */
    uint8_t proto;          /* IPv4 protocol */
    uint8_t flags;          /* MCL_F_* */
    uint8_t kind;           /* MCL_K_* */
    uint8_t bad;            /* first bad reason of this frame (0 none) */
    uint32_t ifindex;       /* pcapng interface (0 for pcap) */
} mcl_frame;

/* submessage classes */
enum { MCL_C_NONE = 0, MCL_C_DISCOVERY = 1, MCL_C_USER = 2 };

#define MCL_NO_PREFIX 0xffffu
#define MCL_MAX_PREFIXES 32768u

typedef struct {
    int64_t seq;            /* DATA/DATA_FRAG/NACK_FRAG/HB_FRAG: writerSN; HB: firstSN;
                               ACKNACK: bitmapBase; GAP: gapStart; INFO_TS: raw time */
    int64_t seq2;           /* HB: lastSN; ACKNACK: highest NACKed SN (base-1 if none);
                               GAP: gapList base; DATA_FRAG: sampleSize */
    uint32_t frame;
    uint32_t writer_eid;    /* entity ids, big-endian value as on the wire */
    uint32_t reader_eid;
    uint32_t aux1;          /* HB/ACKNACK/NACK_FRAG: count; DATA_FRAG: fragmentStartingNum;
                               HB_FRAG: lastFragmentNum; NACK_FRAG: fragment bitmap base */
    uint32_t plen;          /* DATA/DATA_FRAG: serialized payload bytes; ACKNACK/NACK_FRAG:
                               number of NACKed items (bits set) */
    uint16_t src_prefix;    /* index into the prefix table (sender participant) */
    uint16_t dst_prefix;    /* index into the prefix table, MCL_NO_PREFIX: none (INFO_DST) */
    uint16_t aux2;          /* ACKNACK/GAP/NACK_FRAG: numBits; DATA_FRAG: fragmentsInSubmessage */
    uint16_t octets;        /* submessage length including its 4-byte header */
    uint8_t id;
    uint8_t flags;
    uint8_t cls;            /* MCL_C_* */
    uint8_t quoted;         /* 1: inside the datagram quoted by an ICMP error (not traffic) */
} mcl_sub;

typedef struct {
    uint32_t frame;
    uint32_t group;         /* IPv4 host order, 0 if none */
    uint32_t src;           /* PIM register inner source / IGMP n/a */
    uint16_t nrec;          /* IGMPv3 report: number of group records; PIM J/P: groups */
    uint8_t proto;          /* 2 IGMP, 103 PIM */
    uint8_t type;           /* IGMP type or PIM type */
    uint8_t version;        /* IGMP 1/2/3, PIM 2 */
    uint8_t rec;            /* 0: the message row; 1: a group record row of that message */
    uint8_t rtype;          /* IGMPv3 record type; PIM J/P: 1 join, 2 prune, 3 both */
    uint8_t pad;
} mcl_ctl;

typedef struct {
    uint32_t frame;
    uint8_t guid[16];
    uint8_t is_reader;
    char topic[128];
    char type[128];
    uint8_t pad[3];
} mcl_topic;

typedef struct {
    mcl_frame *frames; size_t nframes;
    mcl_sub *subs; size_t nsubs;
    mcl_ctl *ctls; size_t nctls;
    mcl_topic *topics; size_t ntopics;
    uint8_t *prefixes; size_t nprefixes;  /* 12 bytes each */
    uint64_t *bad;                          /* mcl_reason_count() counters */
    uint32_t linktype;                      /* of the first interface */
    uint32_t format;                        /* 1 pcap, 2 pcapng */
    uint8_t *repair;                        /* per submessage: 1 = a repair (user DATA/DATA_FRAG
                                               already sent to that destination or to a group) */
} mcl_result;

/* ---- aggregate mode: small tables instead of per-packet rows (captures/wire.py) ----
 * Frames are folded into these tables as they are decoded; memory grows with the number of
 * distinct keys (sources x seconds x kinds, endpoints, groups), not with packets. The key
 * of each table is its first 16 bytes (8 for guid, flood, frag); counters follow. */
#define MCL_PAYLOAD_FRAGMENT_INCOMPLETE 7  /* payload code of fragments whose datagram never completed */

typedef struct {            /* packets: per source address, second, cast, payload */
    uint32_t src; int32_t second; uint8_t cast, payload, pad[6];
    int64_t packets, bytes, fragments;
} mcl_agg_pkt;

typedef struct {            /* submessages: per source address, second, kind, cast, class */
    uint32_t src; int32_t second; uint8_t id, cast, cls, pad[5];
    int64_t submessages, bytes, payload_bytes;
} mcl_agg_sub;

typedef struct {            /* per endpoint GUID (prefix index, entity id) */
    uint32_t eid; uint16_t pfx, pad;
    int64_t first_data, repair_data, first_bytes, repair_bytes;  /* as writer: user DATA(_FRAG) */
    int64_t acknacks_with_nacks, nacked_sns;                     /* as writer: ACKNACKs NACKing it */
    int64_t heartbeats;                                          /* as writer: user HEARTBEATs */
    int64_t acknacks;                                            /* as reader: user ACKNACKs */
} mcl_agg_guid;

typedef struct { uint32_t src, group; int64_t frames, bytes; } mcl_agg_flood;
typedef struct { uint32_t nfrags, pad; int64_t datagrams; } mcl_agg_frag;

typedef struct {            /* IGMP / PIM message and record rows, per frame source */
    uint32_t src, group; uint8_t proto, type, version, rec, rtype, pad[3];
    int64_t messages, bytes;
} mcl_agg_ctl;

typedef struct {            /* one ACKNACK that NACKs something, or one NACK_FRAG */
    double ts; int64_t first_sn, last_sn;
    uint32_t src, reader_eid, writer_eid, nacked;
    uint16_t rpfx, wpfx; uint8_t id, pad[3];
} mcl_nack;

typedef struct mcl_agg mcl_agg;

typedef struct {
    mcl_agg_pkt *pkt; size_t npkt;
    mcl_agg_sub *sub; size_t nsub;
    mcl_agg_guid *guid; size_t nguid;
    mcl_agg_flood *flood; size_t nflood;
    mcl_agg_frag *frag; size_t nfrag;
    mcl_agg_ctl *ctl; size_t nctl;
    mcl_topic *topic; size_t ntopic;       /* distinct SEDP rows, first seen first */
    mcl_nack *nack; size_t nnack;
    uint8_t *prefixes; size_t nprefixes;   /* 12 bytes each */
    uint64_t *subcount, *quoted;           /* 256 each: submessages by id (traffic, ICMP-quoted) */
    uint64_t *bad;                         /* mcl_reason_count() counters */
    uint64_t nframes, frag_frames, rtps_bytes, repair_generations;
    double tmin, tmax;                     /* first and last timestamp */
} mcl_agg_result;

/* Time span of a capture file's first `limit` frames (0: all; no frames: both 0). */
int mcl_scan_file(const char *path, uint64_t limit, double *tmin, double *tmax, uint64_t *nframes,
                  char *err, size_t errlen);
mcl_agg *mcl_agg_new(double t0);        /* t0: origin of the `second` keys */
int mcl_agg_file(mcl_agg *a, const char *path, char *err, size_t errlen);
int mcl_agg_buffer(mcl_agg *a, const uint8_t *buf, size_t len, char *err, size_t errlen);
void mcl_agg_result_get(mcl_agg *a, mcl_agg_result *out);  /* views into a, valid until freed */
void mcl_agg_free(mcl_agg *a);

int mcl_abi_version(void);
int mcl_reason_count(void);
const char *mcl_reason_name(int i);
size_t mcl_sizeof(int which);  /* 0 frame, 1 sub, 2 ctl, 3 topic, 4 result, 5 agg_pkt, 6 agg_sub,
                                  7 agg_guid, 8 agg_flood, 9 agg_frag, 10 agg_ctl, 11 nack,
                                  12 agg_result */

/* 0 on success; on failure a one-line message in err. A file that is not a capture is an
 * error; a capture with bad or truncated content is a success with bad[] counters set. */
int mcl_dissect_file(const char *path, mcl_result *out, char *err, size_t errlen);
int mcl_dissect_buffer(const uint8_t *buf, size_t len, mcl_result *out, char *err, size_t errlen);
/* The same with a bound: fails with a message once the rows exceed max_bytes (0: none). */
int mcl_dissect_file_max(const char *path, size_t max_bytes, mcl_result *out, char *err, size_t errlen);
int mcl_dissect_buffer_max(const uint8_t *buf, size_t len, size_t max_bytes, mcl_result *out, char *err,
                           size_t errlen);
void mcl_free(mcl_result *r);

#endif
