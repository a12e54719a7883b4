/* A growable set of 128-bit keys (open addressing, linear probing): the table of positions
 * seen of every C core. Included by _ccommon.h; every function is static. */
#ifndef ACCORDION_SOLVER_KEYSET_H
#define ACCORDION_SOLVER_KEYSET_H
#include <stdint.h>
#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

typedef struct {
    uint64_t *keys; /* 2 words a slot; a slot is empty when both words are 0 */
    size_t cap;     /* slots, a power of two */
    size_t used;
    size_t max_cap; /* never grows past this; further inserts are dropped */
    size_t first_cap; /* the slots it began with, and begins with again (ks_reset) */
    int huge;       /* whether its memory is asked for in huge pages (ks_init) */
    void *map;      /* when keys lies in a mapping of its own (ks_alloc): the mapping, */
    size_t map_len; /* and its length; 0 when keys is calloc's */
} KeySet;

#define KS_HUGE_PAGE ((size_t)2 << 20)

/* The zeroed memory of `slots` slots into s->keys (s->map, s->map_len), or NULL. With s->huge,
 * a large table is mapped on its own, aligned to a huge page, and the kernel asked to back it
 * with huge pages (Linux's transparent huge pages, where they are on madvise): a probe lands
 * anywhere in a table of tens of megabytes, and with 4 KB pages nearly every probe also misses
 * the TLB. (calloc's memory may come from the heap, already mapped in small pages.) Only a
 * hint: the contents are the same either way. */
static uint64_t *ks_alloc(KeySet *s, size_t slots)
{
    size_t bytes = slots * 2 * sizeof(uint64_t);
    s->map = NULL;
    s->map_len = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (s->huge && bytes >= 2 * KS_HUGE_PAGE) {
        size_t len = bytes + KS_HUGE_PAGE;
        void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map != MAP_FAILED) {
            uintptr_t at = ((uintptr_t)map + KS_HUGE_PAGE - 1) & ~(uintptr_t)(KS_HUGE_PAGE - 1);
            madvise((void *)at, bytes, MADV_HUGEPAGE);
            s->map = map;
            s->map_len = len;
            return (uint64_t *)at;
        }
    }
#endif
    return (uint64_t *)calloc(slots * 2, sizeof(uint64_t));
}

static void ks_release(uint64_t *keys, void *map, size_t map_len)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (map_len) {
        munmap(map, map_len);
        return;
    }
#endif
    (void)map;
    (void)map_len;
    free(keys);
}

/* An empty set of `cap` slots that grows up to `max_cap`; with `huge`, its memory asked for in
 * huge pages (ks_alloc: only for a table of two huge pages or more, so a first table of fewer
 * slots is calloc's either way). 0 when out of memory. */
static int ks_init(KeySet *s, size_t cap, size_t max_cap, int huge)
{
    s->huge = huge;
    s->keys = ks_alloc(s, cap);
    s->cap = cap;
    s->first_cap = cap;
    s->used = 0;
    s->max_cap = max_cap;
    return s->keys != NULL;
}

static void ks_free(KeySet *s)
{
    ks_release(s->keys, s->map, s->map_len);
    s->keys = NULL;
}

/* Empties the set, as a pass that starts afresh needs it: the table freed, then a new one of the
 * size it began with (same limit, same pages). 0 when out of memory. */
static inline int ks_reset(KeySet *s)
{
    ks_free(s);
    return ks_init(s, s->first_cap, s->max_cap, s->huge);
}

static inline size_t ks_slot(uint64_t a, uint64_t b, size_t mask)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 29;
    return (size_t)h & mask;
}

static inline int ks_has(const KeySet *s, uint64_t a, uint64_t b)
{
    size_t mask = s->cap - 1, i = ks_slot(a, b, mask);
    for (;;) {
        const uint64_t *k = s->keys + 2 * i;
        if (k[0] == a && k[1] == b)
            return 1;
        if (k[0] == 0 && k[1] == 0)
            return 0;
        i = (i + 1) & mask;
    }
}

static void ks_raw_add(uint64_t *keys, size_t cap, uint64_t a, uint64_t b)
{
    size_t mask = cap - 1, i = ks_slot(a, b, mask);
    for (;;) {
        uint64_t *k = keys + 2 * i;
        if (k[0] == a && k[1] == b)
            return;
        if (k[0] == 0 && k[1] == 0) {
            k[0] = a;
            k[1] = b;
            return;
        }
        i = (i + 1) & mask;
    }
}

static void ks_add(KeySet *s, uint64_t a, uint64_t b)
{
    if ((s->used + 1) * 2 > s->cap) {
        if (s->cap * 2 > s->max_cap)
            return; /* full: the table only saves work, so dropping a key is safe */
        size_t ncap = s->cap * 2;
        void *old_map = s->map;
        size_t old_len = s->map_len;
        uint64_t *nk = ks_alloc(s, ncap);
        if (nk == NULL) {
            s->map = old_map;
            s->map_len = old_len;
            return;
        }
        for (size_t i = 0; i < s->cap; i++) {
            uint64_t *k = s->keys + 2 * i;
            if (k[0] || k[1])
                ks_raw_add(nk, ncap, k[0], k[1]);
        }
        ks_release(s->keys, old_map, old_len);
        s->keys = nk;
        s->cap = ncap;
    }
    size_t before_mask = s->cap - 1, i = ks_slot(a, b, before_mask);
    for (;;) {
        uint64_t *k = s->keys + 2 * i;
        if (k[0] == a && k[1] == b)
            return;
        if (k[0] == 0 && k[1] == 0) {
            k[0] = a;
            k[1] = b;
            s->used++;
            return;
        }
        i = (i + 1) & before_mask;
    }
}

/* Whether (a, b) is in the set; when not, adds it as ks_add does: ks_has then ks_add, with one
 * probe instead of two. */
static inline int ks_has_or_add(KeySet *s, uint64_t a, uint64_t b)
{
    size_t mask = s->cap - 1, i = ks_slot(a, b, mask);
    uint64_t *k;
    for (;;) {
        k = s->keys + 2 * i;
        if (k[0] == a && k[1] == b)
            return 1;
        if (k[0] == 0 && k[1] == 0)
            break;
        i = (i + 1) & mask;
    }
    if ((s->used + 1) * 2 > s->cap) {
        ks_add(s, a, b); /* grows the table (or drops the key when full) */
        return 0;
    }
    k[0] = a;
    k[1] = b;
    s->used++;
    return 0;
}

/* Brings the first slot of (a, b) towards the cache: probes of keys known in advance then wait
 * for memory side by side, not one after the other. */
static inline void ks_prefetch(const KeySet *s, uint64_t a, uint64_t b)
{
    __builtin_prefetch(s->keys + 2 * ks_slot(a, b, s->cap - 1));
}

#endif
