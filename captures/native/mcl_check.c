/* mcl_check: dissect captures from the command line (JSON out), or fuzz the dissector.
 *
 *   mcl_check FILE...                 one JSON line per file: frames, submessages by id,
 *                                     control messages, bad reasons
 *   mcl_check --mutate FILE N SEED    N random mutations of FILE (bit flips, byte
 *                                     overwrites, truncation, splices) dissected in memory;
 *                                     built with AddressSanitizer this is the fuzz harness */
#include "mcl_dissect.h"

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
        mcl_result r;
        char err[256];
        if (mcl_dissect_buffer(buf, blen, &r, err, sizeof err) == 0) {
            frames += r.nframes;
            for (int i = 1; i < mcl_reason_count(); i++) bad += r.bad[i];
            mcl_free(&r);
        }
    }
    printf("{\"mutations\": %ld, \"frames\": %llu, \"bad\": %llu}\n", n, frames, bad);
    free(orig); free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "--mutate") == 0)
        return mutate(argv[2], atol(argv[3]), strtoull(argv[4], NULL, 10));
    if (argc < 2) { fprintf(stderr, "usage: mcl_check FILE... | --mutate FILE N SEED\n"); return 2; }
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
    }
    return rc;
}
