/* mcastlab wire dissector: one pass over a memory-mapped pcap/pcapng file.
 *
 * Layers: pcap/pcapng records -> link (Ethernet + VLAN, Linux SLL/SLL2, raw IP) ->
 * IPv4 (fragment reassembly) -> UDP -> RTPS (every submessage, per-submessage endianness)
 * | IGMP v1/v2/v3 | PIM v2 (Register payloads are dissected again as IPv4).
 * Every malformed input is counted under a named reason; no input makes it read out of
 * bounds, loop forever or abort. */
#define _GNU_SOURCE
#include "mcl_dissect.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- bad reasons -------------------------------------------------------------------- */
enum {
    R_NONE = 0,
    R_FILE_TRUNCATED,
    R_PCAPNG_BAD_BLOCK,
    R_SNAP_CUT,
    R_UNSUPPORTED_LINKTYPE,
    R_LINK_TRUNCATED,
    R_IP_BAD_HEADER,
    R_IP_TRUNCATED,
    R_FRAG_BAD,
    R_FRAG_OVERLAP,
    R_FRAG_EVICTED,
    R_FRAG_INCOMPLETE,
    R_UDP_BAD_LENGTH,
    R_RTPS_SHORT_HEADER,
    R_RTPS_BAD_SUBMESSAGE_LENGTH,
    R_RTPS_SUBMESSAGE_TOO_SHORT,
    R_RTPS_UNKNOWN_ID,
    R_RTPS_BAD_INLINE_QOS,
    R_IGMP_TRUNCATED,
    R_PIM_TRUNCATED,
    R_PIM_BAD_VERSION,
    R_PIM_REGISTER_NESTED,
    R_ICMP_QUOTE_CUT,
    R_COUNT
};

static const char *reason_names[R_COUNT] = {
    "none",
    "file_truncated",
    "pcapng_bad_block",
    "snap_cut",
    "unsupported_linktype",
    "link_truncated",
    "ip_bad_header",
    "ip_truncated",
    "frag_bad",
    "frag_overlap",
    "frag_evicted",
    "frag_incomplete",
    "udp_bad_length",
    "rtps_short_header",
    "rtps_bad_submessage_length",
    "rtps_submessage_too_short",
    "rtps_unknown_id",
    "rtps_bad_inline_qos",
    "igmp_truncated",
    "pim_truncated",
    "pim_bad_version",
    "pim_register_nested",
    "icmp_quote_cut",
};

int mcl_abi_version(void) { return MCL_ABI_VERSION; }
int mcl_reason_count(void) { return R_COUNT; }
const char *mcl_reason_name(int i) { return (i >= 0 && i < R_COUNT) ? reason_names[i] : "?"; }

size_t mcl_sizeof(int which)
{
    switch (which) {
    case 0: return sizeof(mcl_frame);
    case 1: return sizeof(mcl_sub);
    case 2: return sizeof(mcl_ctl);
    case 3: return sizeof(mcl_topic);
    case 4: return sizeof(mcl_result);
    case 5: return sizeof(mcl_agg_pkt);
    case 6: return sizeof(mcl_agg_sub);
    case 7: return sizeof(mcl_agg_guid);
    case 8: return sizeof(mcl_agg_flood);
    case 9: return sizeof(mcl_agg_frag);
    case 10: return sizeof(mcl_agg_ctl);
    case 11: return sizeof(mcl_nack);
    case 12: return sizeof(mcl_agg_result);
    default: return 0;
    }
}

/* ---- growable arrays --------------------------------------------------------------- */
typedef struct { void *p; size_t n, cap, elem; int oom; } vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t ncap = v->cap ? v->cap * 2 : 1024;
        void *np = realloc(v->p, ncap * v->elem);
        if (!np) { v->oom = 1; return NULL; }
        v->p = np; v->cap = ncap;
    }
    void *e = (char *)v->p + v->n * v->elem;
    memset(e, 0, v->elem);
    v->n++;
    return e;
}

/* ---- byte helpers ------------------------------------------------------------------ */
static inline uint16_t be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t be32(const uint8_t *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }
static inline uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t le32(const uint8_t *p) { return p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24); }
static inline uint16_t rd16(const uint8_t *p, int le) { return le ? le16(p) : be16(p); }
static inline uint32_t rd32(const uint8_t *p, int le) { return le ? le32(p) : be32(p); }
static inline int64_t rdsn(const uint8_t *p, int le)
{   /* SequenceNumber_t = { int32 high; uint32 low } */
    int32_t hi = (int32_t)rd32(p, le);
    uint32_t lo = rd32(p + 4, le);
    return (int64_t)(((uint64_t)(uint32_t)hi << 32) | lo);
}

/* ---- fragment reassembly ------------------------------------------------------------ */
#define NSLOTS 256
#define MAXDGRAM 65535
#define FRAG_TIMEOUT 30.0

typedef struct {
    int used;
    int busy;           /* its buffer is being dissected (a PIM Register inside it) */
    uint32_t src, dst;
    uint16_t id;
    uint8_t proto;
    uint16_t nfrags;
    int total;          /* -1 until the last fragment (MF=0) arrived */
    uint32_t nblocks;   /* 8-byte blocks present */
    double first_ts;
    uint64_t lru;
    uint8_t *buf;       /* MAXDGRAM bytes */
    vec parts;          /* aggregate mode: the fragments held here ({second, wirelen}) */
    uint8_t bits[MAXDGRAM / 8 / 8 + 1];  /* one bit per 8-byte block */
} fslot;

/* ---- GUID prefix interning ------------------------------------------------------------ */
#define PFX_BITS 16
#define PFX_SIZE (1u << PFX_BITS)

typedef struct {
    const uint8_t *map; size_t maplen; uint8_t *owned;
    vec frames, subs, ctls, topics, prefixes;
    uint64_t bad[R_COUNT];
    fslot *slots;
    fslot *last_slot;
    uint64_t lru_clock;
    uint32_t *pfx_table;  /* PFX_SIZE entries: index+1, 0 empty */
    uint32_t linktypes[64]; uint32_t nifaces;
    int tsresol_ns[64];    /* pcapng: per-interface ts units per second (as power of 10 or 2) */
    double tsdiv[64];
    int format;
    int pcap_le, pcap_ns; uint32_t pcap_linktype;
    mcl_frame *cur;        /* frame being decoded */
    uint32_t curidx;
    int depth;             /* PIM Register nesting */
    int quoted;            /* dissecting the datagram quoted by an ICMP error */
    int mode;              /* MODE_ROWS, MODE_AGG or MODE_SCAN */
    int windowed;          /* the map is a file we mapped: read it window by window */
    size_t win_end;        /* end of the window made resident */
    size_t win_drop;       /* below this, pages were dropped from the process */
    size_t row_limit;      /* rows mode: bytes of per-packet rows allowed (0: no limit) */
    int too_big;
    mcl_agg *ag;           /* aggregate mode: where the frame's figures go */
    mcl_frame fbuf;        /* aggregate and scan modes: the frame being decoded */
    double tmin, tmax;     /* scan mode: first and last timestamp */
    uint64_t nscan, scan_limit;  /* scan mode: frames seen, stop after this many (0: all) */
    int frag_stored;       /* aggregate mode: this frame's fragment waits in a slot */
    vec reasm;             /* aggregate mode: fragments of the datagram completed here */
    mcl_agg *rep;          /* rows mode: the repair detector's state */
    vec marks;             /* rows mode: per submessage, 1 if a repair (user DATA/DATA_FRAG) */
} ctx;

enum { MODE_ROWS = 0, MODE_AGG = 1, MODE_SCAN = 2 };
typedef struct { int32_t second; uint32_t wirelen; } part;
static void agg_parts_incomplete(ctx *c, fslot *s);
static void agg_frame(ctx *c);
static void row_mark_repair(ctx *c, const mcl_sub *s);

/* ---- aggregate mode ----------------------------------------------------------------------
 * Instead of a row per frame and per submessage, each frame is folded into small tables
 * keyed by what the wire tables group on (source address, second, kind, GUID, group...).
 * Memory is then bounded by the number of distinct keys, not by the number of packets;
 * the only per-packet state is the repair detector's, and it is capped (two generations
 * of MCL_REPAIR_GENERATION sends each). Rows of a table live in insertion order in one
 * array (what Python receives); a slot array of (tag << 32 | row + 1) indexes them. */
typedef struct {
    uint8_t *rows; size_t n, cap, rowlen, klen;
    uint64_t *slots; size_t mask;  /* mask + 1 slots, a power of two */
    uint64_t (*hash)(const void *key);
    size_t last;                   /* row + 1 of the last hit: runs of one key are common */
    int oom;
} htab;

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL; h ^= h >> 33;
    return h;
}

static uint64_t hash_bytes(const uint8_t *k, size_t klen)
{   /* one multiply per word, one full mix at the end */
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ klen;
    size_t i = 0;
    for (; i + 8 <= klen; i += 8) {
        uint64_t w; memcpy(&w, k + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ULL; h ^= h >> 32;
    }
    if (i < klen) { uint64_t w = 0; memcpy(&w, k + i, klen - i); h = (h ^ w) * 0x9e3779b97f4a7c15ULL; }
    return mix64(h);
}

static inline int key_eq(const uint8_t *a, const uint8_t *b, size_t klen)
{
    uint64_t x[3], y[3];
    switch (klen) {
    case 8: memcpy(x, a, 8); memcpy(y, b, 8); return x[0] == y[0];
    case 16: memcpy(x, a, 16); memcpy(y, b, 16); return x[0] == y[0] && x[1] == y[1];
    case 24: memcpy(x, a, 24); memcpy(y, b, 24); return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
    default: return memcmp(a, b, klen) == 0;
    }
}

static void ht_init(htab *t, size_t rowlen, size_t klen, uint64_t (*hash)(const void *))
{
    memset(t, 0, sizeof *t);
    t->rowlen = rowlen; t->klen = klen; t->hash = hash;
}

static void ht_free(htab *t) { free(t->rows); free(t->slots); t->rows = NULL; t->slots = NULL; t->n = t->cap = 0; t->mask = 0; }

static int ht_grow_slots(htab *t)
{
    size_t nslots = t->slots ? (t->mask + 1) * 2 : 256;
    uint64_t *ns = calloc(nslots, sizeof *ns);
    if (!ns) { t->oom = 1; return -1; }
    for (size_t i = 0; i < t->n; i++) {
        uint64_t h = t->hash(t->rows + i * t->rowlen);
        size_t pos = h & (nslots - 1);
        while (ns[pos]) pos = (pos + 1) & (nslots - 1);
        ns[pos] = (h >> 32 << 32) | (i + 1);
    }
    free(t->slots);
    t->slots = ns; t->mask = nslots - 1;
    return 0;
}

/* The row with this key, or NULL; *pos gets the slot where it would go. */
static uint8_t *ht_find(htab *t, const void *key, uint64_t h, size_t *pos)
{
    if (!t->slots) return NULL;
    uint64_t tag = h >> 32 << 32;
    size_t p = h & t->mask;
    for (;;) {
        uint64_t v = t->slots[p];
        if (!v) break;
        if ((v & 0xffffffff00000000ULL) == tag) {
            uint8_t *r = t->rows + ((v & 0xffffffffu) - 1) * t->rowlen;
            if (key_eq(r, key, t->klen)) { t->last = v & 0xffffffffu; return r; }
        }
        p = (p + 1) & t->mask;
    }
    if (pos) *pos = p;
    return NULL;
}

/* A new row for key (not in t; pos from the ht_find that missed it). */
static uint8_t *ht_insert(htab *t, const void *key, uint64_t h, size_t pos)
{
    if (t->oom) return NULL;
    if (!t->slots || (t->n + 1) * 2 > t->mask + 1) {
        if (ht_grow_slots(t)) return NULL;
        ht_find(t, key, h, &pos);
    }
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        uint8_t *nr = realloc(t->rows, ncap * t->rowlen);
        if (!nr) { t->oom = 1; return NULL; }
        t->rows = nr; t->cap = ncap;
    }
    uint8_t *r = t->rows + t->n * t->rowlen;
    memset(r, 0, t->rowlen);
    memcpy(r, key, t->klen);
    t->n++;
    t->slots[pos] = (h >> 32 << 32) | t->n;
    t->last = t->n;
    return r;
}

/* The row with this key, created (zeroed, key copied) if new; NULL when out of memory. */
static uint8_t *ht_get(htab *t, const void *key, int *created)
{
    if (t->last && key_eq(t->rows + (t->last - 1) * t->rowlen, key, t->klen)) {
        if (created) *created = 0;
        return t->rows + (t->last - 1) * t->rowlen;
    }
    uint64_t h = t->hash(key);
    size_t pos = 0;
    uint8_t *r = ht_find(t, key, h, &pos);
    if (created) *created = r == NULL;
    return r ? r : ht_insert(t, key, h, pos);
}

static uint64_t h_pkt(const void *k) { return hash_bytes(k, 16); }
static uint64_t h_sub(const void *k) { return hash_bytes(k, 16); }
static uint64_t h_guid(const void *k) { return hash_bytes(k, 8); }
static uint64_t h_flood(const void *k) { return hash_bytes(k, 8); }
static uint64_t h_frag(const void *k) { return hash_bytes(k, 8); }
static uint64_t h_ctl(const void *k) { return hash_bytes(k, 16); }
static uint64_t h_topic(const void *k) { return hash_bytes(k, sizeof(mcl_topic)); }

/* Repair detector keys: (writer, sn, fragment[, destination address and port]): readers in
 * different processes of one host have their own unicast ports, so a writer's unicast
 * fan-out to them is one datagram per port to the same address, not a repair (before
 * 2026-12-07 the key had the address only, and a unicast 75x75's fan-out to the ~18
 * readers of a host read as 17.7 times its first sends in repairs). The slot position follows
 * the sequence number, so the sends of one writer land in neighbouring slots (cache
 * friendly); the tag (high half) is a full hash of the key. */
typedef struct { uint32_t weid; uint16_t wpfx; uint16_t dport; uint32_t dst; uint32_t frag; int64_t sn; } repkey;
typedef struct { repkey k; double ts; } fmcrow;

static uint64_t h_rep(const void *key)
{
    const repkey *k = key;
    uint64_t stream = mix64(((uint64_t)k->weid << 16 | k->wpfx) ^ ((uint64_t)k->dst << 40)
                            ^ ((uint64_t)k->dport << 20) ^ ((uint64_t)k->frag << 48));
    uint64_t local = (stream + (uint64_t)k->sn * 8 + k->frag) & 0xffffffffu;
    uint64_t tag = (stream ^ ((uint64_t)k->sn * 0x9e3779b97f4a7c15ULL)) * 0xc4ceb9fe1a85ec53ULL;
    return (tag >> 32 << 32) | local;
}

#ifndef MCL_REPAIR_GENERATION
#define MCL_REPAIR_GENERATION (1u << 20)
#endif

struct mcl_agg {
    htab pkt, sub, guid, flood, frag, ctl, topic;
    htab dup[2], fmc[2];   /* [0] current generation, [1] the previous one */
    vec nacks;
    vec prefixes; uint32_t *pfx_table;
    uint64_t nframes, frag_frames, rtps_bytes, repair_generations;
    uint64_t subcount[256], quoted[256];
    uint32_t sub_memo[256];  /* row + 1 of the last submessage row of each id */
    uint64_t bad[R_COUNT];
    double t0, tmin, tmax;
    int oom;
};

static int limit_hit(ctx *c)
{
    if (c->mode == MODE_SCAN) return c->scan_limit && c->nscan >= c->scan_limit ? 1 : 0;
    if (c->mode == MODE_AGG) {
        mcl_agg *a = c->ag;
        htab *ts[] = {&a->pkt, &a->sub, &a->guid, &a->flood, &a->frag, &a->ctl, &a->topic,
                      &a->dup[0], &a->fmc[0]};
        for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) if (ts[i]->oom) a->oom = 1;
        if (a->nacks.oom || c->reasm.oom) a->oom = 1;
        return a->oom ? -1 : 0;
    }
    if (c->mode == MODE_ROWS && c->row_limit &&
        c->frames.n * sizeof(mcl_frame) + c->subs.n * sizeof(mcl_sub) + c->ctls.n * sizeof(mcl_ctl) > c->row_limit) {
        c->too_big = 1;
        return -2;
    }
    return 0;
}

static void agg_topic(mcl_agg *a, const mcl_topic *t) { ht_get(&a->topic, t, NULL); }

static void count_frame(mcl_agg *a, uint32_t src, uint32_t dst, int32_t sec, uint32_t wirelen,
                        int frag, int payload, int user)
{
    int mcast = (dst >> 28) == 0xe;
    mcl_agg_pkt k;
    memset(&k, 0, sizeof k);
    k.src = src; k.second = sec; k.cast = (uint8_t)mcast; k.payload = (uint8_t)payload;
    mcl_agg_pkt *r = (mcl_agg_pkt *)ht_get(&a->pkt, &k, NULL);
    if (r) { r->packets++; r->bytes += wirelen; r->fragments += frag; }
    /* flooding: multicast user data (RTPS user traffic or other UDP), 224.0.0.0/24 excluded */
    if (mcast && (dst >> 8) != 0xe00000u && (payload == MCL_K_UDP || user)) {
        mcl_agg_flood fk;
        memset(&fk, 0, sizeof fk);
        fk.src = src; fk.group = dst;
        mcl_agg_flood *fr = (mcl_agg_flood *)ht_get(&a->flood, &fk, NULL);
        if (fr) { fr->frames++; fr->bytes += wirelen; }
    }
}

static void agg_parts_incomplete(ctx *c, fslot *s)
{
    if (c->mode != MODE_AGG) return;
    part *pt = s->parts.p;
    for (size_t i = 0; i < s->parts.n; i++)
        count_frame(c->ag, s->src, s->dst, pt[i].second, pt[i].wirelen, 1, MCL_PAYLOAD_FRAGMENT_INCOMPLETE, 0);
    s->parts.n = 0;
}

static mcl_agg_guid *guid_row(mcl_agg *a, uint16_t pfx, uint32_t eid)
{
    mcl_agg_guid k;
    memset(&k, 0, sizeof k);
    k.eid = eid; k.pfx = pfx;
    return (mcl_agg_guid *)ht_get(&a->guid, &k, NULL);
}

static void rotate(htab *g, size_t rowlen, uint64_t (*hash)(const void *))
{
    ht_free(&g[1]);
    g[1] = g[0];
    ht_init(&g[0], rowlen, sizeof(repkey), hash);
}

/* One user DATA/DATA_FRAG: a repair when the same (writer, sn, fragment) was already
 * sent to this destination, or sent to a multicast group earlier. */
static int data_is_repair(mcl_agg *a, const mcl_sub *s, const mcl_frame *f)
{
    repkey k;
    memset(&k, 0, sizeof k);
    k.weid = s->writer_eid; k.wpfx = s->src_prefix; k.sn = s->seq;
    k.frag = s->id == 0x16 ? s->aux1 : 0;
    k.dst = f->dst;
    k.dport = f->dport;
    uint64_t h = h_rep(&k);
    size_t pos = 0;
    if (a->dup[0].n >= MCL_REPAIR_GENERATION) { rotate(a->dup, sizeof(repkey), h_rep); a->repair_generations++; }
    int seen = ht_find(&a->dup[0], &k, h, &pos) != NULL;
    if (!seen) {
        seen = a->dup[1].n && ht_find(&a->dup[1], &k, h, NULL);
        if (!seen) {
            ht_insert(&a->dup[0], &k, h, pos);
        }
    }
    k.dst = 0;
    k.dport = 0;
    h = h_rep(&k);
    if (a->fmc[0].n >= MCL_REPAIR_GENERATION) rotate(a->fmc, sizeof(fmcrow), h_rep);
    fmcrow *m = (fmcrow *)ht_find(&a->fmc[0], &k, h, &pos);
    if (!m && a->fmc[1].n) m = (fmcrow *)ht_find(&a->fmc[1], &k, h, NULL);
    int repair = seen || (m && f->ts > m->ts);
    if (!m && (f->flags & MCL_F_MCAST)) {
        fmcrow *n = (fmcrow *)ht_insert(&a->fmc[0], &k, h, pos);
        if (n) n->ts = f->ts;
    }
    return repair;
}

static void agg_sub(ctx *c, const mcl_sub *s, int32_t sec, int *user)
{
    mcl_agg *a = c->ag;
    const mcl_frame *f = &c->fbuf;
    if (s->quoted) { a->quoted[s->id]++; return; }
    a->subcount[s->id]++;
    int is_data = s->id == 0x15 || s->id == 0x16;
    mcl_agg_sub k;
    memset(&k, 0, sizeof k);
    k.src = f->src; k.second = sec; k.id = s->id; k.cast = (f->flags & MCL_F_MCAST) != 0; k.cls = s->cls;
    mcl_agg_sub *r = NULL;
    uint32_t memo = a->sub_memo[s->id];
    if (memo && key_eq(a->sub.rows + (memo - 1) * sizeof k, (const uint8_t *)&k, 16))
        r = (mcl_agg_sub *)(a->sub.rows + (memo - 1) * sizeof k);
    else if ((r = (mcl_agg_sub *)ht_get(&a->sub, &k, NULL)) != NULL)
        a->sub_memo[s->id] = (uint32_t)((uint8_t *)r - a->sub.rows) / sizeof k + 1;
    if (r) { r->submessages++; r->bytes += s->octets; if (is_data) r->payload_bytes += s->plen; }
    if (s->cls == MCL_C_USER) *user = 1;
    /* the writer's prefix is the sender's, except for reader-side submessages (ACKNACK,
     * NACK_FRAG) whose writer is the destination (INFO_DST) */
    if (is_data && s->cls == MCL_C_USER) {
        int rep = data_is_repair(a, s, f);
        mcl_agg_guid *g = guid_row(a, s->src_prefix, s->writer_eid);
        if (g) {
            if (rep) { g->repair_data++; g->repair_bytes += s->plen; }
            else { g->first_data++; g->first_bytes += s->plen; }
        }
    } else if (s->id == 0x07 && s->cls == MCL_C_USER) {
        mcl_agg_guid *g = guid_row(a, s->src_prefix, s->writer_eid);
        if (g) g->heartbeats++;
    }
    if (s->id == 0x06 || s->id == 0x12) {
        if (s->id == 0x06 && s->cls == MCL_C_USER) {
            mcl_agg_guid *g = guid_row(a, s->src_prefix, s->reader_eid);
            if (g) g->acknacks++;
        }
        if (s->id == 0x06 && s->plen > 0) {
            mcl_agg_guid *g = guid_row(a, s->dst_prefix, s->writer_eid);
            if (g) { g->acknacks_with_nacks++; g->nacked_sns += s->plen; }
        }
        if (s->id == 0x12 || s->plen > 0) {
            mcl_nack *n = vec_push(&a->nacks);
            if (n) {
                n->ts = f->ts; n->src = f->src; n->id = s->id;
                n->reader_eid = s->reader_eid; n->writer_eid = s->writer_eid;
                n->rpfx = s->src_prefix; n->wpfx = s->dst_prefix;
                n->first_sn = s->seq; n->last_sn = s->id == 0x06 ? s->seq2 : s->seq;
                n->nacked = s->plen;
            }
        }
    }
}

/* The second since t0 a timestamp falls in. A capture's timestamps may jump (a clock set
   during the capture, an edited or damaged record header): a second outside int32_t is
   the first or last one it can hold, never a float-to-int conversion out of range (that is
   undefined behaviour, which UBSan's float-cast-overflow check aborts on). */
static int32_t second_of(double ts, double t0)
{
    double s = floor(ts - t0);
    if (!(s > (double)INT32_MIN)) return INT32_MIN; /* also NaN */
    if (s > (double)INT32_MAX) return INT32_MAX;
    return (int32_t)s;
}

static void agg_frame(ctx *c)
{
    mcl_agg *a = c->ag;
    mcl_frame *f = &c->fbuf;
    int32_t sec = second_of(f->ts, a->t0);
    int user = 0;
    if (a->nframes == 0 || f->ts < a->tmin) a->tmin = f->ts;
    if (a->nframes == 0 || f->ts > a->tmax) a->tmax = f->ts;
    a->nframes++;
    mcl_sub *sb = c->subs.p;
    for (size_t i = 0; i < c->subs.n; i++) agg_sub(c, &sb[i], sec, &user);
    c->subs.n = 0;
    mcl_ctl *ct = c->ctls.p;
    for (size_t i = 0; i < c->ctls.n; i++) {
        mcl_agg_ctl k;
        memset(&k, 0, sizeof k);
        k.src = f->src; k.group = ct[i].group; k.proto = ct[i].proto; k.type = ct[i].type;
        k.version = ct[i].version; k.rec = ct[i].rec; k.rtype = ct[i].rtype;
        mcl_agg_ctl *r = (mcl_agg_ctl *)ht_get(&a->ctl, &k, NULL);
        if (r) { r->messages++; r->bytes += f->wirelen; }
    }
    c->ctls.n = 0;
    if (f->kind == MCL_K_RTPS) a->rtps_bytes += f->l4len;
    if (f->flags & MCL_F_REASM) {
        mcl_agg_frag k;
        memset(&k, 0, sizeof k);
        k.nfrags = f->nfrags;
        mcl_agg_frag *r = (mcl_agg_frag *)ht_get(&a->frag, &k, NULL);
        if (r) r->datagrams++;
    }
    if (f->flags & MCL_F_FRAG) {
        a->frag_frames++;
        if (c->reasm.n) {  /* a datagram completed here: its fragments take its payload */
            part *pt = c->reasm.p;
            for (size_t i = 0; i < c->reasm.n; i++)
                count_frame(a, f->src, f->dst, pt[i].second, pt[i].wirelen, 1, f->kind, user);
            c->reasm.n = 0;
        } else if (!c->frag_stored) {  /* rejected fragment: its datagram never completes */
            count_frame(a, f->src, f->dst, sec, f->wirelen, 1, MCL_PAYLOAD_FRAGMENT_INCOMPLETE, 0);
        }
    } else {
        count_frame(a, f->src, f->dst, sec, f->wirelen, 0, f->kind, user);
    }
    c->frag_stored = 0;
}

/* Rows mode: the same repair decision, kept per submessage (captures/inspect_sample.py). */
static void row_mark_repair(ctx *c, const mcl_sub *s)
{
    if (!c->rep || s->quoted || s->cls != MCL_C_USER || (s->id != 0x15 && s->id != 0x16)) return;
    if (!data_is_repair(c->rep, s, c->cur)) return;
    size_t idx = (size_t)(s - (const mcl_sub *)c->subs.p);
    while (c->marks.n <= idx) if (!vec_push(&c->marks)) return;
    ((uint8_t *)c->marks.p)[idx] = 1;
}


static void bad(ctx *c, int reason)
{
    c->bad[reason]++;
    if (c->cur) {
        c->cur->flags |= MCL_F_BAD;
        if (!c->cur->bad) c->cur->bad = (uint8_t)reason;
    }
}

static uint16_t intern_prefix(ctx *c, const uint8_t *p)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < 12; i++) h = (h ^ p[i]) * 16777619u;
    for (uint32_t k = 0; k < PFX_SIZE; k++) {
        uint32_t s = (h + k) & (PFX_SIZE - 1);
        uint32_t v = c->pfx_table[s];
        if (v == 0) {
            if (c->prefixes.n >= MCL_MAX_PREFIXES) return MCL_NO_PREFIX;  /* table full */
            uint8_t *e = vec_push(&c->prefixes);
            if (!e) return MCL_NO_PREFIX;
            memcpy(e, p, 12);
            c->pfx_table[s] = (uint32_t)c->prefixes.n;
            return (uint16_t)(c->prefixes.n - 1);
        }
        if (memcmp((uint8_t *)c->prefixes.p + (size_t)(v - 1) * 12, p, 12) == 0) return (uint16_t)(v - 1);
    }
    return MCL_NO_PREFIX;
}

/* ---- RTPS ---------------------------------------------------------------------------- */
static int is_builtin(uint32_t eid) { return eid != 0 && (eid & 0xc0u) == 0xc0u; }

static int known_id(uint8_t id)
{
    switch (id) {
    case 0x01: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0c: case 0x0d: case 0x0e:
    case 0x0f: case 0x11: case 0x12: case 0x13: case 0x15: case 0x16: case 0x18: case 0x19:
    case 0x30: case 0x31: case 0x32: case 0x33: case 0x34:
        return 1;
    default:
        return id >= 0x80;
    }
}

/* Parse a ParameterList starting at p (len bytes); return the offset just after the
 * sentinel, or -1 when it runs off the end. */
static long skip_plist(const uint8_t *p, size_t len, int le)
{
    size_t off = 0;
    for (int guard = 0; guard < 100000; guard++) {
        if (off + 4 > len) return -1;
        uint16_t pid = rd16(p + off, le), plen = rd16(p + off + 2, le);
        off += 4;
        if (pid == 0x0001) return (long)off;
        if (off + plen > len) return -1;
        off += plen;
    }
    return -1;
}

static void copy_cdr_string(char *dst, size_t dstlen, const uint8_t *p, size_t len, int le)
{
    dst[0] = 0;
    if (len < 4) return;
    uint32_t n = rd32(p, le);
    if (n == 0 || n > len - 4) return;
    size_t k = n - 1 < dstlen - 1 ? n - 1 : dstlen - 1;
    memcpy(dst, p + 4, k);
    dst[k] = 0;
    for (size_t i = 0; i < k; i++)
        if ((unsigned char)dst[i] < 0x20 || (unsigned char)dst[i] > 0x7e) dst[i] = '?';
}

/* SEDP publication/subscription DATA: endpoint GUID, topic and type names. */
static void sedp_topic(ctx *c, const uint8_t *p, size_t len, int is_reader)
{
    if (len < 4) return;
    uint16_t scheme = be16(p);
    if (scheme != 0x0002 && scheme != 0x0003) return;  /* PL_CDR_BE / PL_CDR_LE */
    int le = scheme == 0x0003;
    mcl_topic t;
    memset(&t, 0, sizeof t);
    int have_guid = 0;
    size_t off = 4;
    for (int guard = 0; guard < 10000 && off + 4 <= len; guard++) {
        uint16_t pid = rd16(p + off, le), plen = rd16(p + off + 2, le);
        off += 4;
        if (pid == 0x0001 || off + plen > len) break;
        const uint8_t *v = p + off;
        if (pid == 0x0005) copy_cdr_string(t.topic, sizeof t.topic, v, plen, le);
        else if (pid == 0x0007) copy_cdr_string(t.type, sizeof t.type, v, plen, le);
        else if (pid == 0x005a && plen >= 16) { memcpy(t.guid, v, 16); have_guid = 1; }
        off += plen;
    }
    if (!have_guid) return;
    t.is_reader = (uint8_t)is_reader;
    if (c->mode == MODE_AGG) { agg_topic(c->ag, &t); return; }
    mcl_topic *e = vec_push(&c->topics);
    if (!e) return;
    *e = t;
    e->frame = c->curidx;
    e->is_reader = (uint8_t)is_reader;
}

static uint32_t popcount_bitmap(const uint8_t *bm, uint32_t nbits, int le, uint32_t *highest)
{
    uint32_t cnt = 0;
    *highest = UINT32_MAX;
    for (uint32_t w = 0; w < (nbits + 31) / 32; w++) {
        uint32_t word = rd32(bm + 4 * w, le);
        uint32_t valid = nbits - 32 * w >= 32 ? 32 : nbits - 32 * w;
        if (valid < 32) word &= ~((1u << (32 - valid)) - 1);  /* MSB-first bits */
        if (word) {
            cnt += (uint32_t)__builtin_popcount(word);
            *highest = 32 * w + (31 - (uint32_t)__builtin_ctz(word));
        }
    }
    return cnt;
}

static void rtps(ctx *c, const uint8_t *p, size_t len)
{
    if (len < 20) { bad(c, R_RTPS_SHORT_HEADER); return; }
    uint16_t src_prefix = intern_prefix(c, p + 8);
    uint16_t dst_prefix = MCL_NO_PREFIX;
    size_t off = 20;
    size_t pending_info = c->subs.n;  /* INFO_* rows waiting for a class */
    if (!c->quoted) c->cur->kind = MCL_K_RTPS;
    while (off < len) {
        if (len - off < 4) { bad(c, R_RTPS_BAD_SUBMESSAGE_LENGTH); return; }
        const uint8_t *sm = p + off;
        uint8_t id = sm[0], fl = sm[1];
        int le = fl & 1;
        uint16_t olen = rd16(sm + 2, le);
        size_t bodylen;
        int last = 0;
        if (olen == 0 && id != 0x01 && id != 0x09) { bodylen = len - off - 4; last = 1; }
        else bodylen = olen;
        if (bodylen > len - off - 4) {
            if (c->quoted) {  /* the quote ends inside it: count it as tshark does, and stop */
                c->bad[R_ICMP_QUOTE_CUT]++;
                mcl_sub *s = vec_push(&c->subs);
                if (s) { s->frame = c->curidx; s->id = id; s->flags = fl; s->quoted = 1;
                         s->src_prefix = src_prefix; s->dst_prefix = dst_prefix; }
            } else {
                bad(c, R_RTPS_BAD_SUBMESSAGE_LENGTH);
            }
            return;
        }
        const uint8_t *b = sm + 4;
        mcl_sub *s = vec_push(&c->subs);
        if (!s) return;
        s->quoted = (uint8_t)c->quoted;
        s->frame = c->curidx;
        s->id = id;
        s->flags = fl;
        s->octets = (uint16_t)(bodylen + 4 > 0xffff ? 0xffff : bodylen + 4);
        s->src_prefix = src_prefix;
        s->dst_prefix = dst_prefix;
        int short_ = 0;
        switch (id) {
        case 0x06: /* ACKNACK */
            if (bodylen < 24) { short_ = 1; break; }
            s->reader_eid = be32(b); s->writer_eid = be32(b + 4);
            s->seq = rdsn(b + 8, le);
            { uint32_t nb = rd32(b + 16, le); s->aux2 = (uint16_t)(nb > 0xffff ? 0xffff : nb); }
            if (s->aux2 > 256 || 20 + 4 * (size_t)((s->aux2 + 31) / 32) + 4 > bodylen) { short_ = 1; break; }
            {
                uint32_t hi;
                s->plen = popcount_bitmap(b + 20, s->aux2, le, &hi);
                s->seq2 = hi == UINT32_MAX ? s->seq - 1 : s->seq + hi;
                s->aux1 = rd32(b + 20 + 4 * ((s->aux2 + 31) / 32), le);
            }
            break;
        case 0x07: /* HEARTBEAT */
            if (bodylen < 28) { short_ = 1; break; }
            s->reader_eid = be32(b); s->writer_eid = be32(b + 4);
            s->seq = rdsn(b + 8, le); s->seq2 = rdsn(b + 16, le); s->aux1 = rd32(b + 24, le);
            break;
        case 0x08: /* GAP */
            if (bodylen < 28) { short_ = 1; break; }
            s->reader_eid = be32(b); s->writer_eid = be32(b + 4);
            s->seq = rdsn(b + 8, le); s->seq2 = rdsn(b + 16, le);
            { uint32_t nb = rd32(b + 24, le); s->aux2 = (uint16_t)(nb > 0xffff ? 0xffff : nb); }
            if (s->aux2 > 256 || 28 + 4 * (size_t)((s->aux2 + 31) / 32) > bodylen) short_ = 1;
            break;
        case 0x09: /* INFO_TS */
            if (!(fl & 2)) {
                if (bodylen < 8) { short_ = 1; break; }
                s->seq = (int64_t)(((uint64_t)rd32(b, le) << 32) | rd32(b + 4, le));
            }
            break;
        case 0x0c: /* INFO_SRC */
            if (bodylen < 20) { short_ = 1; break; }
            src_prefix = intern_prefix(c, b + 8);
            break;
        case 0x0e: /* INFO_DST */
            if (bodylen < 12) { short_ = 1; break; }
            {
                static const uint8_t zero[12];
                dst_prefix = memcmp(b, zero, 12) == 0 ? MCL_NO_PREFIX : intern_prefix(c, b);
            }
            s->dst_prefix = dst_prefix;
            break;
        case 0x12: /* NACK_FRAG */
            if (bodylen < 24) { short_ = 1; break; }
            s->reader_eid = be32(b); s->writer_eid = be32(b + 4);
            s->seq = rdsn(b + 8, le); s->aux1 = rd32(b + 16, le);
            { uint32_t nb = rd32(b + 20, le); s->aux2 = (uint16_t)(nb > 0xffff ? 0xffff : nb); }
            if (s->aux2 > 256 || 24 + 4 * (size_t)((s->aux2 + 31) / 32) > bodylen) { short_ = 1; break; }
            {
                uint32_t hi;
                s->plen = popcount_bitmap(b + 24, s->aux2, le, &hi);
            }
            break;
        case 0x13: /* HEARTBEAT_FRAG */
            if (bodylen < 24) { short_ = 1; break; }
            s->reader_eid = be32(b); s->writer_eid = be32(b + 4);
            s->seq = rdsn(b + 8, le); s->aux1 = rd32(b + 16, le);
            s->aux2 = (uint16_t)(rd32(b + 20, le) > 0xffff ? 0xffff : rd32(b + 20, le));  /* count */
            break;
        case 0x15: /* DATA */
        case 0x16: /* DATA_FRAG */
        {
            size_t fixed = id == 0x15 ? 20 : 32;
            if (bodylen < fixed) { short_ = 1; break; }
            uint16_t to_qos = rd16(b + 2, le);
            s->reader_eid = be32(b + 4); s->writer_eid = be32(b + 8);
            s->seq = rdsn(b + 12, le);
            if (id == 0x16) {
                s->aux1 = rd32(b + 20, le);
                s->aux2 = rd16(b + 24, le);
                s->seq2 = rd32(b + 28, le);
            }
            size_t pay = 4 + (size_t)to_qos;
            if (pay > bodylen) { bad(c, R_RTPS_BAD_INLINE_QOS); break; }
            if (fl & 2) {  /* Q: inline QoS parameter list */
                long k = skip_plist(b + pay, bodylen - pay, le);
                if (k < 0) { bad(c, R_RTPS_BAD_INLINE_QOS); break; }
                pay += (size_t)k;
            }
            int has_payload = id == 0x16 || (fl & 0x0c);
            if (has_payload) {
                s->plen = (uint32_t)(bodylen - pay);
                if (id == 0x15 && (s->writer_eid == 0x000003c2u || s->writer_eid == 0x000004c2u))
                    sedp_topic(c, b + pay, bodylen - pay, s->writer_eid == 0x000004c2u);
            }
            break;
        }
        default:
            if (!known_id(id)) bad(c, R_RTPS_UNKNOWN_ID);
            break;
        }
        if (short_) bad(c, R_RTPS_SUBMESSAGE_TOO_SHORT);
        if (s->writer_eid || s->reader_eid) {
            uint8_t cls = (is_builtin(s->writer_eid) || is_builtin(s->reader_eid)) ? MCL_C_DISCOVERY : MCL_C_USER;
            s->cls = cls;
            mcl_sub *all = c->subs.p;
            for (size_t i = pending_info; i + 1 < c->subs.n; i++) all[i].cls = cls;
            pending_info = c->subs.n;
        }
        if (c->mode == MODE_ROWS) row_mark_repair(c, s);
        if (last) break;
        off += 4 + bodylen;
    }
}

/* ---- IGMP / PIM ------------------------------------------------------------------------ */
static mcl_ctl *ctl_row(ctx *c, uint8_t proto, uint8_t type)
{
    mcl_ctl *e = vec_push(&c->ctls);
    if (e) { e->frame = c->curidx; e->proto = proto; e->type = type; }
    return e;
}

static void igmp(ctx *c, const uint8_t *p, size_t len)
{
    c->cur->kind = MCL_K_IGMP;
    if (len < 8) { bad(c, R_IGMP_TRUNCATED); return; }
    uint8_t type = p[0];
    mcl_ctl *m = ctl_row(c, 2, type);
    if (!m) return;
    switch (type) {
    case 0x11:
        m->version = len >= 12 ? 3 : (p[1] == 0 ? 1 : 2);
        m->group = be32(p + 4);
        break;
    case 0x12: m->version = 1; m->group = be32(p + 4); break;
    case 0x16: m->version = 2; m->group = be32(p + 4); break;
    case 0x17: m->version = 2; m->group = be32(p + 4); break;
    case 0x22: {
        m->version = 3;
        uint16_t n = be16(p + 6);
        m->nrec = n;
        size_t off = 8;
        for (uint16_t i = 0; i < n; i++) {
            if (off + 8 > len) { bad(c, R_IGMP_TRUNCATED); return; }
            mcl_ctl *r = ctl_row(c, 2, type);
            if (!r) return;
            r->version = 3; r->rec = 1; r->rtype = p[off];
            r->group = be32(p + off + 4);
            r->nrec = be16(p + off + 2);  /* number of sources */
            off += 8 + 4 * (size_t)be16(p + off + 2) + 4 * (size_t)p[off + 1];
        }
        break;
    }
    default: break;
    }
}

static void ipv4(ctx *c, const uint8_t *p, size_t len, int snapcut);

static void pim(ctx *c, const uint8_t *p, size_t len, int snapcut)
{
    c->cur->kind = MCL_K_PIM;
    if (len < 4) { bad(c, R_PIM_TRUNCATED); return; }
    uint8_t ver = p[0] >> 4, type = p[0] & 0x0f;
    if (ver != 2) { bad(c, R_PIM_BAD_VERSION); return; }
    mcl_ctl *m = ctl_row(c, 103, type);
    if (!m) return;
    m->version = 2;
    switch (type) {
    case 1: /* Register: 4 bytes of flags, then the inner IPv4 packet (unless Null-Register) */
        if (len < 8) { bad(c, R_PIM_TRUNCATED); return; }
        if (len >= 8 + 20 && (p[8] >> 4) == 4) {
            m->src = be32(p + 8 + 12);
            m->group = be32(p + 8 + 16);
            if (!(be32(p + 4) & 0x40000000u)) {  /* N bit clear: real data */
                if (c->depth > 0) { bad(c, R_PIM_REGISTER_NESTED); return; }
                c->depth++;
                uint32_t osrc = c->cur->src, odst = c->cur->dst;
                uint8_t oproto = c->cur->proto;
                ipv4(c, p + 8, len - 8, snapcut);
                c->cur->flags |= MCL_F_PIMREG;
                c->cur->kind = MCL_K_PIM;
                c->cur->src = osrc; c->cur->dst = odst; c->cur->proto = oproto;
                c->depth--;
            }
        }
        break;
    case 2: /* Register-Stop: encoded group (8) + encoded source (6) */
    case 5: /* Assert: encoded group, encoded source, ... */
        if (len < 4 + 8) { bad(c, R_PIM_TRUNCATED); return; }
        m->group = be32(p + 8);
        break;
    case 3: /* Join/Prune */
    {
        if (len < 4 + 6 + 4) { bad(c, R_PIM_TRUNCATED); return; }
        uint8_t ngroups = p[4 + 6 + 1];
        m->nrec = ngroups;
        size_t off = 4 + 6 + 4;
        for (int g = 0; g < ngroups; g++) {
            if (off + 12 > len) { bad(c, R_PIM_TRUNCATED); return; }
            uint32_t grp = be32(p + off + 4);
            uint16_t nj = be16(p + off + 8), np = be16(p + off + 10);
            mcl_ctl *r = ctl_row(c, 103, type);
            if (!r) return;
            r->version = 2; r->rec = 1; r->group = grp;
            r->rtype = (uint8_t)((nj ? 1 : 0) | (np ? 2 : 0));
            if (g == 0) m->group = grp;
            off += 12 + 8 * ((size_t)nj + np);
        }
        break;
    }
    default: break;
    }
}

/* ---- UDP ------------------------------------------------------------------------------- */
static void udp(ctx *c, const uint8_t *p, size_t len)
{
    if (len < 8) { bad(c, R_UDP_BAD_LENGTH); return; }
    uint16_t ulen = be16(p + 4);
    if (ulen < 8 || ulen > len) { bad(c, R_UDP_BAD_LENGTH); return; }
    c->cur->sport = be16(p);
    c->cur->dport = be16(p + 2);
    c->cur->l4len = ulen - 8u;
    c->cur->kind = MCL_K_UDP;
    const uint8_t *pl = p + 8;
    size_t plen = ulen - 8u;
    if (plen >= 4 && memcmp(pl, "RTPS", 4) == 0) rtps(c, pl, plen);
}

/* ICMP errors quote the offending datagram (IP header + as much as fits in 576 bytes);
 * tshark dissects the quoted RTPS, so we do too, flagged as quoted. */
static void icmp(ctx *c, const uint8_t *p, size_t len)
{
    c->cur->kind = MCL_K_ICMP;
    if (len < 8 + 20 || c->quoted) return;
    uint8_t type = p[0];
    if (type != 3 && type != 4 && type != 5 && type != 11 && type != 12) return;
    const uint8_t *ip = p + 8;
    size_t iplen = len - 8, ihl = (size_t)(ip[0] & 0x0f) * 4;
    if ((ip[0] >> 4) != 4 || ihl < 20 || ihl + 8 > iplen || ip[9] != 17) return;
    if ((be16(ip + 6) & 0x1fff) != 0) return;  /* not the first fragment: no UDP header */
    const uint8_t *u = ip + ihl;
    size_t avail = iplen - ihl - 8;
    uint16_t ulen = be16(u + 4);
    if (ulen < 8) return;
    size_t plen = (size_t)ulen - 8 < avail ? (size_t)ulen - 8 : avail;
    if (plen >= 4 && memcmp(u + 8, "RTPS", 4) == 0) {
        c->quoted = 1;
        rtps(c, u + 8, plen);
        c->quoted = 0;
    }
}

static void l4(ctx *c, uint8_t proto, const uint8_t *p, size_t len, int snapcut)
{
    switch (proto) {
    case 1: icmp(c, p, len); break;
    case 17: udp(c, p, len); break;
    case 2: igmp(c, p, len); break;
    case 103: pim(c, p, len, snapcut); break;
    default: break;
    }
}

/* ---- IPv4 with reassembly -------------------------------------------------------------- */
static fslot *slot_find(ctx *c, uint32_t src, uint32_t dst, uint16_t id, uint8_t proto, double ts)
{
    /* fast path: fragments of one datagram usually follow each other */
    fslot *l = c->last_slot;
    if (l && l->used && !l->busy && l->src == src && l->dst == dst && l->id == id && l->proto == proto)
        return l;
    fslot *free_ = NULL, *oldest = NULL;
    for (int i = 0; i < NSLOTS; i++) {
        fslot *s = &c->slots[i];
        if (s->busy) continue;
        if (s->used && ts - s->first_ts > FRAG_TIMEOUT) {  /* stale: never completed */
            bad(c, R_FRAG_INCOMPLETE);
            agg_parts_incomplete(c, s);
            s->used = 0;
        }
        if (!s->used) { if (!free_) free_ = s; continue; }
        if (s->src == src && s->dst == dst && s->id == id && s->proto == proto) return c->last_slot = s;
        if (!oldest || s->lru < oldest->lru) oldest = s;
    }
    fslot *s = free_;
    if (!s) {
        if (!oldest) return NULL;  /* every slot busy: cannot happen at nesting depth 1 */
        bad(c, R_FRAG_EVICTED);
        s = oldest;
        agg_parts_incomplete(c, s);
    }
    if (!s->buf) {
        s->buf = malloc(MAXDGRAM + 16);
        if (!s->buf) return NULL;
    }
    s->used = 1; s->src = src; s->dst = dst; s->id = id; s->proto = proto;
    s->nfrags = 0; s->total = -1; s->first_ts = ts; s->nblocks = 0;
    memset(s->bits, 0, sizeof s->bits);
    return c->last_slot = s;
}

static void ipv4(ctx *c, const uint8_t *p, size_t len, int snapcut)
{
    if (len < 20 || (p[0] >> 4) != 4) { bad(c, snapcut ? R_SNAP_CUT : R_IP_BAD_HEADER); return; }
    size_t ihl = (size_t)(p[0] & 0x0f) * 4;
    size_t tot = be16(p + 2);
    if (ihl < 20 || tot < ihl) { bad(c, R_IP_BAD_HEADER); return; }
    mcl_frame *f = c->cur;
    if (c->depth == 0) {
        f->flags |= MCL_F_IPV4;
        f->src = be32(p + 12);
        f->dst = be32(p + 16);
        f->proto = p[9];
        f->ipid = be16(p + 4);
        if ((f->dst >> 28) == 0xe) f->flags |= MCL_F_MCAST;
    }
    if (tot > len) { bad(c, snapcut ? R_SNAP_CUT : R_IP_TRUNCATED); return; }
    uint16_t fo = be16(p + 6);
    size_t off8 = fo & 0x1fff;
    int mf = (fo & 0x2000) != 0;
    const uint8_t *pl = p + ihl;
    size_t plen = tot - ihl;
    if (!mf && off8 == 0) { l4(c, p[9], pl, plen, snapcut); return; }
    /* fragment */
    if (c->depth == 0) f->flags |= MCL_F_FRAG;
    size_t start = off8 * 8;
    if ((mf && (plen % 8 != 0 || plen == 0)) || start + plen > MAXDGRAM) { bad(c, R_FRAG_BAD); return; }
    fslot *s = slot_find(c, be32(p + 12), be32(p + 16), be16(p + 4), p[9], f->ts);
    if (!s) return;
    s->lru = ++c->lru_clock;
    int overlap = 0;
    size_t b0 = start / 8, b1 = (start + plen + 7) / 8, k = b0;
    while (k < b1) {
        if ((k & 7) == 0 && k + 8 <= b1) {  /* a whole byte of the bitmap at once */
            uint8_t *byte = &s->bits[k >> 3];
            if (*byte) { overlap = 1; s->nblocks -= (uint32_t)__builtin_popcount(*byte); }
            *byte = 0xff;
            s->nblocks += 8;
            k += 8;
            continue;
        }
        if (s->bits[k >> 3] & (1u << (k & 7))) overlap = 1;
        else s->nblocks++;
        s->bits[k >> 3] |= (uint8_t)(1u << (k & 7));
        k++;
    }
    if (overlap) bad(c, R_FRAG_OVERLAP);
    memcpy(s->buf + start, pl, plen);
    s->nfrags++;
    if (c->mode == MODE_AGG && c->depth == 0) {  /* counted when its datagram is decided */
        part *pt = vec_push(&s->parts);
        if (pt) {
            pt->second = second_of(f->ts, c->ag->t0);
            pt->wirelen = f->wirelen;
            c->frag_stored = 1;
        }
    }
    if (!mf) s->total = (int)(start + plen);
    if (s->total < 0) return;
    /* complete when every 8-byte block up to the end is present */
    size_t nb = ((size_t)s->total + 7) / 8;
    if (s->nblocks < nb) return;
    for (size_t k = 0; k < nb / 8; k++)  /* confirm: no hole below the end */
        if (s->bits[k] != 0xff) return;
    for (size_t k = nb & ~(size_t)7; k < nb; k++)
        if (!(s->bits[k >> 3] & (1u << (k & 7)))) return;
    /* complete */
    if (c->depth == 0) {
        f->flags |= MCL_F_REASM; f->nfrags = s->nfrags;
        if (c->mode == MODE_AGG) {  /* hand its fragments to the frame that completed it */
            vec t = c->reasm; c->reasm = s->parts; s->parts = t; s->parts.n = 0;
        }
    }
    s->busy = 1;
    l4(c, s->proto, s->buf, (size_t)s->total, snapcut);
    s->busy = 0;
    s->used = 0;
}

/* ---- link layer ------------------------------------------------------------------------- */
static void frame(ctx *c, uint32_t linktype, const uint8_t *p, size_t caplen, size_t wirelen,
                  double ts, uint32_t ifindex)
{
    if (c->mode == MODE_SCAN) {  /* only the time span */
        if (c->nscan == 0 || ts < c->tmin) c->tmin = ts;
        if (c->nscan == 0 || ts > c->tmax) c->tmax = ts;
        c->nscan++;
        return;
    }
    mcl_frame *f;
    if (c->mode == MODE_AGG) {
        f = &c->fbuf;
        memset(f, 0, sizeof *f);
        c->curidx = 0;
    } else {
        f = vec_push(&c->frames);
        if (!f) return;
        c->curidx = (uint32_t)(c->frames.n - 1);
    }
    c->cur = f;
    f->ts = ts;
    f->caplen = (uint32_t)caplen;
    f->wirelen = (uint32_t)wirelen;
    f->ifindex = ifindex;
    f->kind = MCL_K_NONIP;
    int snapcut = caplen < wirelen;
    if (snapcut) { f->flags |= MCL_F_SNAPCUT; }
    uint16_t etype;
    size_t off;
    switch (linktype) {
    case 1: /* Ethernet */
        if (caplen < 14) { bad(c, snapcut ? R_SNAP_CUT : R_LINK_TRUNCATED); goto out; }
        etype = be16(p + 12); off = 14;
        for (int k = 0; k < 2 && (etype == 0x8100 || etype == 0x88a8); k++) {
            if (caplen < off + 4) { bad(c, R_LINK_TRUNCATED); goto out; }
            etype = be16(p + off + 2); off += 4;
        }
        break;
    case 113: /* Linux cooked v1 */
        if (caplen < 16) { bad(c, snapcut ? R_SNAP_CUT : R_LINK_TRUNCATED); goto out; }
        etype = be16(p + 14); off = 16;
        break;
    case 276: /* Linux cooked v2 */
        if (caplen < 20) { bad(c, snapcut ? R_SNAP_CUT : R_LINK_TRUNCATED); goto out; }
        etype = be16(p); off = 20;
        break;
    case 101: case 12: case 228: /* raw IPv4 */
        etype = 0x0800; off = 0;
        break;
    default:
        bad(c, R_UNSUPPORTED_LINKTYPE);
        goto out;
    }
    if (etype == 0x0800) {
        f->kind = MCL_K_OTHER;
        ipv4(c, p + off, caplen - off, snapcut);
    }
out:
    if (c->mode == MODE_AGG) agg_frame(c);
    c->cur = NULL;
}

/* ---- file formats ----------------------------------------------------------------------- */
/* A mapped file is read in windows: the next one is made resident in one go (no page fault
 * per 4 KiB page), the one before is dropped from this process (the page cache keeps it),
 * so resident memory stays ~2 windows whatever the file size. */
#define WINDOW ((size_t)8 << 20)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static void window_at(ctx *c, size_t off)
{
    if (!c->windowed || off < c->win_end) return;
    uint8_t *base = (uint8_t *)(uintptr_t)c->map;  /* page aligned (mmap) */
    size_t keep = off > WINDOW ? (off - WINDOW) & ~(size_t)4095 : 0;  /* records are < 1 MiB */
    if (keep > c->win_drop) {
        madvise(base + c->win_drop, keep - c->win_drop, MADV_DONTNEED);
        c->win_drop = keep;
    }
    size_t from = c->win_end & ~(size_t)4095;
    size_t end = off + WINDOW < c->maplen ? off + WINDOW : c->maplen;
    if (end > from && madvise(base + from, end - from, MADV_POPULATE_READ) != 0)
        madvise(base + from, end - from, MADV_WILLNEED);
    c->win_end = end;
}

static int parse_pcap(ctx *c)
{
    const uint8_t *m = c->map;
    size_t n = c->maplen, off = 24;
    uint32_t magic = le32(m);
    int le = magic == 0xa1b2c3d4u || magic == 0xa1b23c4du;
    int ns = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
    uint32_t lt = rd32(m + 20, le) & 0x0fffffffu;
    c->pcap_linktype = lt;
    c->linktypes[0] = lt; c->nifaces = 1;
    double div = ns ? 1e9 : 1e6;
    while (off < n) {
        window_at(c, off);
        if (n - off < 16) { c->bad[R_FILE_TRUNCATED]++; break; }
        uint32_t sec = rd32(m + off, le), frac = rd32(m + off + 4, le);
        uint32_t incl = rd32(m + off + 8, le), orig = rd32(m + off + 12, le);
        off += 16;
        if (incl > n - off) {
            c->bad[R_FILE_TRUNCATED]++;
            break;
        }
        if (incl > 262144 * 4) { c->bad[R_FILE_TRUNCATED]++; break; }  /* garbage header */
        frame(c, lt, m + off, incl, orig < incl ? incl : orig, sec + frac / div, 0);
        off += incl;
        if (c->frames.oom || c->subs.oom || c->ctls.oom) return -1;
        { int st = limit_hit(c); if (st) return st; }
    }
    return 0;
}

static int parse_pcapng(ctx *c)
{
    const uint8_t *m = c->map;
    size_t n = c->maplen, off = 0;
    int le = 1;
    while (off < n) {
        window_at(c, off);
        if (n - off < 12) { c->bad[R_FILE_TRUNCATED]++; break; }
        uint32_t btype_le = le32(m + off);
        if (btype_le == 0x0a0d0d0au) {  /* SHB: byte order magic decides endianness */
            uint32_t bom = le32(m + off + 8);
            if (bom == 0x1a2b3c4du) le = 1;
            else if (bom == 0x4d3c2b1au) le = 0;
            else { c->bad[R_PCAPNG_BAD_BLOCK]++; break; }
            c->nifaces = 0;
        }
        uint32_t btype = rd32(m + off, le), blen = rd32(m + off + 4, le);
        if (blen < 12 || blen % 4 != 0) { c->bad[R_PCAPNG_BAD_BLOCK]++; break; }
        if (blen > n - off) { c->bad[R_FILE_TRUNCATED]++; break; }
        const uint8_t *b = m + off + 8;
        size_t bl = blen - 12;
        if (btype == 1) { /* IDB */
            if (bl >= 8 && c->nifaces < 64) {
                uint32_t i = c->nifaces++;
                c->linktypes[i] = rd16(b, le);
                c->tsdiv[i] = 1e6;
                size_t o = 8;  /* options */
                while (o + 4 <= bl) {
                    uint16_t code = rd16(b + o, le), olen = rd16(b + o + 2, le);
                    if (code == 0 || o + 4 + olen > bl) break;
                    if (code == 9 && olen >= 1) {
                        uint8_t r = b[o + 4];
                        double d = 1;
                        for (int k = 0; k < (r & 0x7f) && k < 64; k++) d *= (r & 0x80) ? 2 : 10;
                        c->tsdiv[i] = d;
                    }
                    o += 4 + (((size_t)olen + 3) & ~(size_t)3);
                }
            }
        } else if (btype == 6) { /* EPB */
            if (bl < 20) { c->bad[R_PCAPNG_BAD_BLOCK]++; }
            else {
                uint32_t ifc = rd32(b, le);
                uint64_t t = ((uint64_t)rd32(b + 4, le) << 32) | rd32(b + 8, le);
                uint32_t incl = rd32(b + 12, le), orig = rd32(b + 16, le);
                if (incl > bl - 20) { c->bad[R_PCAPNG_BAD_BLOCK]++; }
                else if (ifc >= c->nifaces) { c->bad[R_PCAPNG_BAD_BLOCK]++; }
                else frame(c, c->linktypes[ifc], b + 20, incl, orig < incl ? incl : orig,
                           (double)t / c->tsdiv[ifc], ifc);
            }
        } else if (btype == 3) { /* SPB */
            if (bl >= 4 && c->nifaces > 0) {
                uint32_t orig = rd32(b, le);
                size_t incl = orig < bl - 4 ? orig : bl - 4;
                frame(c, c->linktypes[0], b + 4, incl, orig, 0.0, 0);
            }
        }
        off += blen;
        if (c->frames.oom || c->subs.oom || c->ctls.oom) return -1;
        { int st = limit_hit(c); if (st) return st; }
    }
    c->pcap_linktype = c->nifaces ? c->linktypes[0] : 0;
    return 0;
}

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* One pass over c->map in c->mode. Rows mode fills out; the other modes leave their
 * figures in c (scan) or c->ag (aggregate). */
static int run(ctx *c, mcl_result *out, char *err, size_t errlen)
{
    if (out) memset(out, 0, sizeof *out);
    c->frames.elem = sizeof(mcl_frame);
    c->subs.elem = sizeof(mcl_sub);
    c->ctls.elem = sizeof(mcl_ctl);
    c->topics.elem = sizeof(mcl_topic);
    c->prefixes.elem = 12;
    c->reasm.elem = sizeof(part);
    int rc = 0;
    if (c->maplen < 24 && !(c->maplen >= 12 && le32(c->map) == 0x0a0d0d0au)) {
        errf(err, errlen, "not a pcap or pcapng file (%zu bytes, too short for a header)", c->maplen);
        return -1;
    }
    uint32_t magic = le32(c->map);
    c->slots = calloc(NSLOTS, sizeof(fslot));
    if (c->mode == MODE_AGG) {  /* GUID prefixes stay numbered the same over a point's files */
        c->prefixes = c->ag->prefixes;
        c->pfx_table = c->ag->pfx_table;
    } else {
        c->pfx_table = calloc(PFX_SIZE, sizeof(uint32_t));
    }
    if (!c->slots || !c->pfx_table) { errf(err, errlen, "out of memory"); rc = -1; goto done; }
    for (int i = 0; i < NSLOTS; i++) c->slots[i].parts.elem = sizeof(part);
    if (magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u || magic == 0xa1b23c4du || magic == 0x4d3cb2a1u) {
        c->format = 1;
        rc = parse_pcap(c);
    } else if (magic == 0x0a0d0d0au) {
        c->format = 2;
        rc = parse_pcapng(c);
    } else {
        errf(err, errlen, "not a pcap or pcapng file (magic 0x%08x; allowed: pcap, pcap-ns, pcapng)", magic);
        rc = -1;
        goto done;
    }
    if (rc == 1) rc = 0;  /* scan mode: seen enough */
    if (rc == -2)
        errf(err, errlen, "more than %zu MiB of per-packet rows (%zu frames, %zu submessages so far; "
             "%zu + %zu bytes each): this row-by-row API keeps every packet; use captures.wire "
             "(streaming aggregates, bounded memory) or split the capture (tcpdump -C)",
             c->row_limit >> 20, c->frames.n, c->subs.n, sizeof(mcl_frame), sizeof(mcl_sub));
    else if (rc) errf(err, errlen, "out of memory while dissecting");
    for (int i = 0; i < NSLOTS; i++)
        if (c->slots[i].used) { c->bad[R_FRAG_INCOMPLETE]++; agg_parts_incomplete(c, &c->slots[i]); }
done:
    if (c->slots) for (int i = 0; i < NSLOTS; i++) { free(c->slots[i].buf); free(c->slots[i].parts.p); }
    free(c->slots);
    free(c->reasm.p);
    if (c->mode == MODE_AGG) {
        c->ag->prefixes = c->prefixes;
        memset(&c->prefixes, 0, sizeof c->prefixes);
        for (int i = 0; i < R_COUNT; i++) c->ag->bad[i] += c->bad[i];
        free(c->subs.p); free(c->ctls.p);
        return rc;
    }
    free(c->pfx_table);
    if (!out) {  /* scan mode */
        free(c->frames.p); free(c->subs.p); free(c->ctls.p); free(c->topics.p); free(c->prefixes.p);
        return rc;
    }
    out->frames = c->frames.p; out->nframes = c->frames.n;
    out->subs = c->subs.p; out->nsubs = c->subs.n;
    out->ctls = c->ctls.p; out->nctls = c->ctls.n;
    out->topics = c->topics.p; out->ntopics = c->topics.n;
    out->prefixes = c->prefixes.p; out->nprefixes = c->prefixes.n;
    out->bad = calloc(R_COUNT, sizeof(uint64_t));
    if (out->bad) memcpy(out->bad, c->bad, sizeof c->bad);
    out->linktype = c->pcap_linktype;
    out->format = (uint32_t)c->format;
    out->repair = calloc(c->subs.n ? c->subs.n : 1, 1);
    if (out->repair && c->marks.n) memcpy(out->repair, c->marks.p, c->marks.n);
    free(c->marks.p);
    if (!out->bad || !out->repair) rc = -1;
    if (rc) { mcl_free(out); }
    return rc;
}

#define DEFAULT_ROW_LIMIT ((size_t)0)

static int rows_buffer(const uint8_t *buf, size_t len, int windowed, size_t max_bytes, mcl_result *out,
                       char *err, size_t errlen)
{
    ctx *c = calloc(1, sizeof(ctx));
    if (!c) { errf(err, errlen, "out of memory"); return -1; }
    c->map = buf; c->maplen = len; c->windowed = windowed;
    c->mode = MODE_ROWS;
    c->row_limit = max_bytes;
    c->marks.elem = 1;
    c->rep = mcl_agg_new(0);
    int rc = c->rep ? run(c, out, err, errlen) : -1;
    if (!c->rep) errf(err, errlen, "out of memory");
    mcl_agg_free(c->rep);
    free(c);
    return rc;
}

int mcl_dissect_buffer_max(const uint8_t *buf, size_t len, size_t max_bytes, mcl_result *out, char *err,
                           size_t errlen)
{
    return rows_buffer(buf, len, 0, max_bytes, out, err, errlen);
}

int mcl_dissect_buffer(const uint8_t *buf, size_t len, mcl_result *out, char *err, size_t errlen)
{
    return mcl_dissect_buffer_max(buf, len, DEFAULT_ROW_LIMIT, out, err, errlen);
}

/* Map a whole capture file read-only; 0 on success. */
static int map_file(const char *path, const uint8_t **m, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) { errf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    struct stat st;
    if (fstat(fd, &st) != 0) { errf(err, errlen, "%s: %s", path, strerror(errno)); close(fd); return -1; }
    if (!S_ISREG(st.st_mode)) { errf(err, errlen, "%s: not a regular file", path); close(fd); return -1; }
    *len = (size_t)st.st_size;
    if (*len == 0) { errf(err, errlen, "%s: empty file, not a pcap or pcapng capture", path); close(fd); return -1; }
    /* made resident window by window (window_at) */
    void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) { errf(err, errlen, "%s: mmap: %s", path, strerror(errno)); return -1; }
    *m = p;
    return 0;
}

int mcl_dissect_file_max(const char *path, size_t max_bytes, mcl_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const uint8_t *m;
    size_t len;
    if (map_file(path, &m, &len, err, errlen)) return -1;
    char e2[384] = "";
    int rc = rows_buffer(m, len, 1, max_bytes, out, e2, sizeof e2);
    if (rc) errf(err, errlen, "%s: %s", path, e2);
    munmap((void *)m, len);
    return rc;
}

int mcl_dissect_file(const char *path, mcl_result *out, char *err, size_t errlen)
{
    return mcl_dissect_file_max(path, DEFAULT_ROW_LIMIT, out, err, errlen);
}

void mcl_free(mcl_result *r)
{
    if (!r) return;
    free(r->frames); free(r->subs); free(r->ctls); free(r->topics); free(r->prefixes); free(r->bad);
    free(r->repair);
    memset(r, 0, sizeof *r);
}

/* ---- aggregate mode: the entry points ----------------------------------------------- */
int mcl_scan_file(const char *path, uint64_t limit, double *tmin, double *tmax, uint64_t *nframes,
                  char *err, size_t errlen)
{
    *tmin = *tmax = 0; *nframes = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) { errf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        errf(err, errlen, "%s: %s", path, st.st_size == 0 ? "empty file, not a pcap or pcapng capture" : "not a regular file");
        close(fd); return -1;
    }
    size_t len = (size_t)st.st_size;
    /* no MAP_POPULATE: only the record headers are read (the aggregate pass maps it again) */
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) { errf(err, errlen, "%s: mmap: %s", path, strerror(errno)); return -1; }
    ctx *c = calloc(1, sizeof(ctx));
    if (!c) { munmap(m, len); errf(err, errlen, "out of memory"); return -1; }
    c->map = m; c->maplen = len; c->mode = MODE_SCAN; c->scan_limit = limit;
    char e2[384] = "";
    int rc = run(c, NULL, e2, sizeof e2);
    if (rc) errf(err, errlen, "%s: %s", path, e2);
    else { *tmin = c->tmin; *tmax = c->tmax; *nframes = c->nscan; }
    free(c);
    munmap(m, len);
    return rc;
}

mcl_agg *mcl_agg_new(double t0)
{
    mcl_agg *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->t0 = t0;
    ht_init(&a->pkt, sizeof(mcl_agg_pkt), 16, h_pkt);
    ht_init(&a->sub, sizeof(mcl_agg_sub), 16, h_sub);
    ht_init(&a->guid, sizeof(mcl_agg_guid), 8, h_guid);
    ht_init(&a->flood, sizeof(mcl_agg_flood), 8, h_flood);
    ht_init(&a->frag, sizeof(mcl_agg_frag), 8, h_frag);
    ht_init(&a->ctl, sizeof(mcl_agg_ctl), 16, h_ctl);
    ht_init(&a->topic, sizeof(mcl_topic), sizeof(mcl_topic), h_topic);
    for (int i = 0; i < 2; i++) {
        ht_init(&a->dup[i], sizeof(repkey), sizeof(repkey), h_rep);
        ht_init(&a->fmc[i], sizeof(fmcrow), sizeof(repkey), h_rep);
    }
    a->nacks.elem = sizeof(mcl_nack);
    a->prefixes.elem = 12;
    a->pfx_table = calloc(PFX_SIZE, sizeof(uint32_t));
    if (!a->pfx_table) { free(a); return NULL; }
    return a;
}

static int agg_buffer(mcl_agg *a, const uint8_t *buf, size_t len, int windowed, char *err, size_t errlen)
{
    ctx *c = calloc(1, sizeof(ctx));
    if (!c) { errf(err, errlen, "out of memory"); return -1; }
    c->map = buf; c->maplen = len; c->mode = MODE_AGG; c->ag = a; c->windowed = windowed;
    int rc = run(c, NULL, err, errlen);
    free(c);
    return rc;
}

int mcl_agg_buffer(mcl_agg *a, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
    return agg_buffer(a, buf, len, 0, err, errlen);
}

int mcl_agg_file(mcl_agg *a, const char *path, char *err, size_t errlen)
{
    const uint8_t *m;
    size_t len;
    if (map_file(path, &m, &len, err, errlen)) return -1;
    char e2[384] = "";
    int rc = agg_buffer(a, m, len, 1, e2, sizeof e2);
    if (rc) errf(err, errlen, "%s: %s", path, e2);
    munmap((void *)m, len);
    return rc;
}

void mcl_agg_result_get(mcl_agg *a, mcl_agg_result *out)
{
    memset(out, 0, sizeof *out);
    out->pkt = (mcl_agg_pkt *)a->pkt.rows; out->npkt = a->pkt.n;
    out->sub = (mcl_agg_sub *)a->sub.rows; out->nsub = a->sub.n;
    out->guid = (mcl_agg_guid *)a->guid.rows; out->nguid = a->guid.n;
    out->flood = (mcl_agg_flood *)a->flood.rows; out->nflood = a->flood.n;
    out->frag = (mcl_agg_frag *)a->frag.rows; out->nfrag = a->frag.n;
    out->ctl = (mcl_agg_ctl *)a->ctl.rows; out->nctl = a->ctl.n;
    out->topic = (mcl_topic *)a->topic.rows; out->ntopic = a->topic.n;
    out->nack = a->nacks.p; out->nnack = a->nacks.n;
    out->prefixes = a->prefixes.p; out->nprefixes = a->prefixes.n;
    out->subcount = a->subcount; out->quoted = a->quoted; out->bad = a->bad;
    out->nframes = a->nframes; out->frag_frames = a->frag_frames; out->rtps_bytes = a->rtps_bytes;
    out->repair_generations = a->repair_generations;
    out->tmin = a->tmin; out->tmax = a->tmax;
}

void mcl_agg_free(mcl_agg *a)
{
    if (!a) return;
    htab *ts[] = {&a->pkt, &a->sub, &a->guid, &a->flood, &a->frag, &a->ctl, &a->topic,
                  &a->dup[0], &a->dup[1], &a->fmc[0], &a->fmc[1]};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) ht_free(ts[i]);
    free(a->nacks.p); free(a->prefixes.p); free(a->pfx_table);
    free(a);
}
