/* mcastlab wire dissector: pcap/pcapng -> columnar records (frames, RTPS submessages,
 * IGMP/PIM control messages, SEDP topics). The Python side (captures/dissect.py) mirrors
 * these structs as numpy structured dtypes: keep the two in sync (MCL_ABI_VERSION). */
#ifndef MCL_DISSECT_H
#define MCL_DISSECT_H

#include <stddef.h>
#include <stdint.h>

#define MCL_ABI_VERSION 5

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
} mcl_result;

int mcl_abi_version(void);
int mcl_reason_count(void);
const char *mcl_reason_name(int i);
size_t mcl_sizeof(int which);  /* 0 frame, 1 sub, 2 ctl, 3 topic, 4 result */

/* 0 on success; on failure a one-line message in err. A file that is not a capture is an
 * error; a capture with bad or truncated content is a success with bad[] counters set. */
int mcl_dissect_file(const char *path, mcl_result *out, char *err, size_t errlen);
int mcl_dissect_buffer(const uint8_t *buf, size_t len, mcl_result *out, char *err, size_t errlen);
void mcl_free(mcl_result *r);

#endif
