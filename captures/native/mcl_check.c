/* mcl_check: dissect captures from the command line (JSON out), or fuzz the dissector.
 *
 *   mcl_check FILE...                 one JSON line per file: frames, submessages by id,
 *                                     control messages, bad reasons (each file also goes
 *                                     through the aggregate API, with t0 = 0)
 *   mcl_check --mutate FILE N SEED    N random mutations of FILE (bit flips, byte
 *                                     overwrites, truncation, splices) dissected in memory;
 *                                     built with AddressSanitizer this is the fuzz harness
 *   mcl_check --mutate-frames FILE N SEED
 *                                     N mutations aimed at whole frames: each edit picks a
 *                                     frame and mostly hits its first 64 bytes (link, IP,
 *                                     UDP and RTPS headers), sometimes its record header
 *                                     (lengths) or a byte anywhere in it; also swaps, drops
 *                                     and duplicates whole frames.
 * Every mutant goes through both the row API and the aggregate API (mcl_agg_*). */
#include "mcl_dissect.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_result(const char *name, const mcl_result *r)
{
    unsigned long ids[256] = {0};
    for (size_t i = 0; i < r->nsubs; i++) ids[r->subs[i].id]++;
    printf("{\"file\": \"%s\", \"frames\": %zu, \"submessages\": {", name, r->nframes);
    int first = 1;
    for (int i = 0; i < 256; i++)
        if (ids[i]) { printf("%s\"%d\": %lu", first ? "" : ", ", i, ids[i]); first = 0; }
    printf("}, \"ctl\": %zu, \"topics\": %zu, \"bad\": {", r->nctls, r->ntopics);
    first = 1;
    for (int i = 1; i < mcl_reason_count(); i++)
        if (r->bad[i]) { printf("%s\"%s\": %llu", first ? "" : ", ", mcl_reason_name(i), (unsigned long long)r->bad[i]); first = 0; }
    printf("}}\n");
}

/* Both APIs on one buffer: returns frames seen, adds bad counts to *bad. */
static unsigned long long dissect_both(const unsigned char *buf, size_t len, unsigned long long *bad)
{
    unsigned long long frames = 0;
    mcl_result r;
    char err[256];
    if (mcl_dissect_buffer(buf, len, &r, err, sizeof err) == 0) {
        frames += r.nframes;
        for (int i = 1; i < mcl_reason_count(); i++) *bad += r.bad[i];
        mcl_free(&r);
    }
    mcl_agg *a = mcl_agg_new(0);
    if (a) {
        if (mcl_agg_buffer(a, buf, len, err, sizeof err) == 0) {
            mcl_agg_result g;
            mcl_agg_result_get(a, &g);
            if (g.nframes != frames) { fprintf(stderr, "aggregate saw %llu frames, rows %llu\n",
                                               (unsigned long long)g.nframes, frames); abort(); }
        }
        mcl_agg_free(a);
    }
    return frames;
}

static unsigned long long rng_state;
static unsigned long long rnd(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

static int mutate(const char *path, long n, unsigned long long seed)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 2; }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0) { fprintf(stderr, "%s: empty\n", path); fclose(f); return 2; }
    unsigned char *orig = malloc((size_t)len), *buf = malloc((size_t)len);
    if (!orig || !buf || fread(orig, 1, (size_t)len, f) != (size_t)len) { fprintf(stderr, "%s: read failed\n", path); fclose(f); return 2; }
    fclose(f);
    rng_state = seed * 2654435761ULL + 1;
    unsigned long long frames = 0, bad = 0;
    for (long it = 0; it < n; it++) {
        memcpy(buf, orig, (size_t)len);
        size_t blen = (size_t)len;
        int k = 1 + (int)(rnd() % 16);
        for (int j = 0; j < k; j++) {
            size_t pos = 24 + rnd() % (blen > 24 ? blen - 24 : 1);
            if (pos >= blen) pos = blen - 1;
            switch (rnd() % 4) {
            case 0: buf[pos] ^= (unsigned char)(1u << (rnd() % 8)); break;
            case 1: buf[pos] = (unsigned char)rnd(); break;
            case 2: { static const unsigned char v[] = {0, 0xff, 0x7f, 0x80, 0x01}; buf[pos] = v[rnd() % 5]; break; }
            default: if (rnd() % 4 == 0) blen = pos + 1; break;  /* truncate */
            }
        }
        frames += dissect_both(buf, blen, &bad);
    }
    printf("{\"mutations\": %ld, \"frames\": %llu, \"bad\": %llu}\n", n, frames, bad);
    free(orig); free(buf);
    return 0;
}

/* Frame records of a classic pcap or a pcapng file: offset of the record header and of
 * the frame's first byte, and the frame length. */
typedef struct { size_t hdr, data, len; } rec;

static size_t find_records(const unsigned char *m, size_t n, rec *out, size_t max)
{
    size_t k = 0;
    if (n < 24) return 0;
    uint32_t magic = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
    if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du) {  /* little-endian classic pcap */
        for (size_t off = 24; off + 16 <= n && k < max;) {
            size_t incl = (size_t)m[off + 8] | (size_t)m[off + 9] << 8 | (size_t)m[off + 10] << 16 | (size_t)m[off + 11] << 24;
            if (incl > n - off - 16) break;
            out[k++] = (rec){off, off + 16, incl};
            off += 16 + incl;
        }
    } else if (magic == 0x0a0d0d0au) {  /* little-endian pcapng: enhanced packet blocks */
        for (size_t off = 0; off + 12 <= n && k < max;) {
            uint32_t bt = (uint32_t)m[off] | (uint32_t)m[off + 1] << 8 | (uint32_t)m[off + 2] << 16 | (uint32_t)m[off + 3] << 24;
            size_t bl = (size_t)m[off + 4] | (size_t)m[off + 5] << 8 | (size_t)m[off + 6] << 16 | (size_t)m[off + 7] << 24;
            if (bl < 12 || bl > n - off) break;
            if (bt == 6 && bl >= 32) {
                size_t incl = (size_t)m[off + 20] | (size_t)m[off + 21] << 8 | (size_t)m[off + 22] << 16 | (size_t)m[off + 23] << 24;
                if (incl <= bl - 32) out[k++] = (rec){off + 20, off + 28, incl};
            }
            off += bl;
        }
    }
    return k;
}

static int mutate_frames(const char *path, long n, unsigned long long seed)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 2; }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len <= 0) { fprintf(stderr, "%s: empty\n", path); fclose(f); return 2; }
    size_t L = (size_t)len;
    unsigned char *orig = malloc(L), *buf = malloc(2 * L + 16), *tmp = malloc(2 * L + 16);
    rec *recs = malloc(sizeof(rec) * 65536);
    if (!orig || !buf || !tmp || !recs || fread(orig, 1, L, f) != L) { fprintf(stderr, "%s: read failed\n", path); fclose(f); return 2; }
    fclose(f);
    size_t nrec = find_records(orig, L, recs, 65536);
    if (!nrec) { fprintf(stderr, "%s: no frame records found (little-endian pcap or pcapng)\n", path); return 2; }
    rng_state = seed * 2654435761ULL + 1;
    unsigned long long frames = 0, bad = 0, head_edits = 0, hdr_edits = 0, moves = 0;
    for (long it = 0; it < n; it++) {
        memcpy(buf, orig, L);
        size_t blen = L;
        int k = 1 + (int)(rnd() % 8);
        for (int j = 0; j < k; j++) {
            rec r = recs[rnd() % nrec];
            unsigned op = (unsigned)(rnd() % 16);
            if (op < 10 && r.len) {  /* the frame's first bytes: link, IP, UDP, RTPS headers */
                size_t lim = r.len < 64 ? r.len : 64;
                size_t pos = r.data + rnd() % lim;
                switch (rnd() % 3) {
                case 0: buf[pos] ^= (unsigned char)(1u << (rnd() % 8)); break;
                case 1: buf[pos] = (unsigned char)rnd(); break;
                default: { static const unsigned char v[] = {0, 0xff, 0x7f, 0x80, 0x01, 0x45, 0x11, 0x08};
                           buf[pos] = v[rnd() % 8]; break; }
                }
                head_edits++;
            } else if (op < 12) {  /* the record header: lengths, timestamps */
                size_t pos = r.hdr + rnd() % 16;
                buf[pos] = (unsigned char)(rnd() % 3 ? buf[pos] ^ (1u << (rnd() % 8)) : rnd());
                hdr_edits++;
            } else if (op < 14 && r.len) {  /* anywhere in the frame */
                buf[r.data + rnd() % r.len] = (unsigned char)rnd();
            } else if (blen == L) {  /* drop, duplicate or swap whole frame records (classic pcap) */
                rec q = recs[rnd() % nrec];
                if (r.hdr == q.hdr || orig[0] == 0x0a) continue;
                rec a = r.hdr < q.hdr ? r : q, b = r.hdr < q.hdr ? q : r;
                size_t alen = a.data + a.len - a.hdr, blen2 = b.data + b.len - b.hdr;
                size_t o = 0;
                memcpy(tmp, buf, a.hdr); o = a.hdr;
                unsigned how = (unsigned)(rnd() % 3);
                if (how == 0) {  /* drop a */
                    memcpy(tmp + o, buf + a.hdr + alen, L - a.hdr - alen); o += L - a.hdr - alen;
                } else if (how == 1) {  /* duplicate a */
                    memcpy(tmp + o, buf + a.hdr, alen); o += alen;
                    memcpy(tmp + o, buf + a.hdr, L - a.hdr); o += L - a.hdr;
                } else {  /* swap a and b */
                    memcpy(tmp + o, buf + b.hdr, blen2); o += blen2;
                    memcpy(tmp + o, buf + a.hdr + alen, b.hdr - a.hdr - alen); o += b.hdr - a.hdr - alen;
                    memcpy(tmp + o, buf + a.hdr, alen); o += alen;
                    memcpy(tmp + o, buf + b.hdr + blen2, L - b.hdr - blen2); o += L - b.hdr - blen2;
                }
                memcpy(buf, tmp, o);
                blen = o;
                moves++;
                break;  /* record offsets moved: no more edits in this mutant */
            }
        }
        if (rnd() % 8 == 0 && blen > 24) blen = 24 + rnd() % (blen - 24);  /* truncate */
        frames += dissect_both(buf, blen, &bad);
    }
    printf("{\"mutations\": %ld, \"frames\": %llu, \"bad\": %llu, \"records\": %zu, "
           "\"frame_head_edits\": %llu, \"record_header_edits\": %llu, \"record_moves\": %llu}\n",
           n, frames, bad, nrec, head_edits, hdr_edits, moves);
    free(orig); free(buf); free(tmp); free(recs);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "--mutate") == 0)
        return mutate(argv[2], atol(argv[3]), strtoull(argv[4], NULL, 10));
    if (argc >= 5 && strcmp(argv[1], "--mutate-frames") == 0)
        return mutate_frames(argv[2], atol(argv[3]), strtoull(argv[4], NULL, 10));
    if (argc < 2) { fprintf(stderr, "usage: mcl_check FILE... | --mutate[-frames] FILE N SEED\n"); return 2; }
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        mcl_result r;
        char err[512];
        if (mcl_dissect_file(argv[i], &r, err, sizeof err) != 0) {
            printf("{\"file\": \"%s\", \"error\": \"%s\"}\n", argv[i], err);
            rc = 1;
            continue;
        }
        print_result(argv[i], &r);
        mcl_free(&r);
        mcl_agg *a = mcl_agg_new(0);  /* and the aggregate API: seconds since t = 0 */
        if (a == NULL || mcl_agg_file(a, argv[i], err, sizeof err) != 0) rc = 1;
        mcl_agg_free(a);
    }
    return rc;
}
