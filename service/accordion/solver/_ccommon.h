/*
 * Helpers shared by the compiled solver cores (_csolver.c, _cklondike.c, ...): the clock, the
 * caller's stop flag, a growable set of 128-bit keys, SplitMix64 (restart noise, Zobrist
 * tables), the beam pass (Spider's, Klondike's and Emperor's), and the steps every solve call
 * takes alike: reading a position's piles, foundations and cards, opening and closing its table
 * and stop flag, and its outcome codes and answer tuple. Every function is static: each
 * extension gets its own copy.
 */
#ifndef ACCORDION_SOLVER_COMMON_H
#define ACCORDION_SOLVER_COMMON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The stop flag argument: None, or a writable buffer of at least one byte (a bytearray).
 * On success *view holds the export (release it with release_stop) and *flag points at its
 * first byte, or is NULL for None. */
static int get_stop(PyObject *obj, Py_buffer *view, volatile const uint8_t **flag)
{
    *flag = NULL;
    view->obj = NULL;
    if (obj == NULL || obj == Py_None)
        return 1;
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE) < 0)
        return 0;
    if (view->len < 1) {
        PyBuffer_Release(view);
        view->obj = NULL;
        PyErr_SetString(PyExc_ValueError, "stop is a writable buffer of at least one byte");
        return 0;
    }
    *flag = (volatile const uint8_t *)view->buf;
    return 1;
}

static void release_stop(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* ---- a growable set of 128-bit keys (open addressing, linear probing) ---- */

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

/* ---- SplitMix64, as the engine's: the generator for restart noise and the Zobrist keys ---- */

/* SplitMix64's finaliser: every bit of the word spread over all of it (the game cores also mix
 * each pile's Zobrist sum with it before they add the piles up). */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t splitmix(uint64_t *state)
{
    return mix64(*state += 0x9E3779B97F4A7C15ULL);
}

/* Restart noise over a position's `nm` moves of `size` bytes each (Emperor's and Klondike's
 * depth-first passes, as their Python twins' dfs): half the time another move goes first, the
 * rest keeping their order. One draw of the generator when there are two moves or more. */
static inline void shake_first_move(uint64_t *rng, void *moves, int nm, size_t size)
{
    if (nm < 2)
        return;
    uint64_t z = splitmix(rng);
    if (z & 1) {
        char *first = (char *)moves, *other = first + (size_t)((z >> 1) % (uint64_t)nm) * size;
        for (size_t k = 0; k < size; k++) {
            char byte = first[k];
            first[k] = other[k];
            other[k] = byte;
        }
    }
}

/* The next `n` words of the generator into keys[0..n-1], in order. */
static inline void zobrist_fill(uint64_t *keys, size_t n, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++)
        keys[i] = splitmix(seed);
}

/* Every word of the array `table` (a Zobrist table, or a row of one: an array, not a pointer)
 * from the generator, in the order of nested loops over its indices, the last one fastest. A
 * macro, for the array's size. */
#define ZOBRIST_FILL(table, seed) zobrist_fill((uint64_t *)(table), sizeof(table) / sizeof(uint64_t), (seed))

/* ---- a binary min-heap of (key, idx): the best-first passes' frontier (Streets', Spider's
 * staged pass); keys are distinct, so the order of pops is the keys' whatever the heap ---- */

typedef struct {
    uint64_t key;
    uint32_t idx; /* the position's index in the pass's store */
} HeapItem;

static inline void heap_push(HeapItem *h, size_t *n, HeapItem it)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].key <= it.key)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = it;
}

static inline HeapItem heap_pop(HeapItem *h, size_t *n)
{
    HeapItem top_item = h[0], last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        HeapItem best = last;
        if (l < *n && h[l].key < best.key)
            best = h[l], m = l;
        if (l + 1 < *n && h[l + 1].key < best.key)
            best = h[l + 1], m = l + 1;
        if (m == i)
            break;
        h[i] = best;
        i = m;
    }
    if (*n)
        h[i] = last;
    return top_item;
}

/* ---- the beam pass (Spider's and Klondike's; _pycommon.beam is its twin) ---- */

#define BEAM_DEAD 0
#define BEAM_WIN 1
#define BEAM_STOP 2
#define BEAM_NO_MEMORY (-1)

/* What a beam needs of a game: positions and moves are plain data of the sizes given; `game`
 * is the game's search context, handed back to every call. */
typedef struct {
    size_t state_size, move_size;
    int max_moves; /* the most moves `moves` writes */
    /* the moves of a position whose depth is `depth`, into `out`; their count */
    int (*moves)(void *game, const void *s, int depth, void *out);
    void (*apply)(void *game, void *s, const void *mv);
    /* counts a child made as a node: nonzero to stop (a budget, the clock or the stop flag) */
    int (*made)(void *game, const void *s);
    int (*won)(void *game, const void *s);
    int (*worth)(void *game, const void *s);
    /* whether to keep a child of depth `depth`: not seen before (then recorded as seen), and
     * whatever else the game drops (a dead end) */
    int (*keep)(void *game, const void *s, int depth);
} BeamGame;

typedef struct {
    int worth;
    int32_t parent, order; /* the position it comes from in the layer; the order it was made in */
} BeamCand;

static int beam_cand_cmp(const void *x, const void *y)
{
    const BeamCand *a = (const BeamCand *)x, *b = (const BeamCand *)y;
    if (a->worth != b->worth)
        return a->worth > b->worth ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* One beam of `width` from `root` (recorded as seen by the caller): each layer is every move
 * from every position of the one before, and the `width` best children kept (by worth, then by
 * the order they were made in) that `keep` takes. BEAM_WIN with the line's moves in `path` and
 * their count in *path_len; BEAM_DEAD when a layer is empty or `max_depth` is reached;
 * BEAM_STOP when `made` says so; BEAM_NO_MEMORY. A position counts when it is made. */
static inline int beam_search(const BeamGame *g, void *game, const void *root, int width, int max_depth, void *path,
                       int *path_len)
{
    int r = BEAM_DEAD;
    size_t ss = g->state_size, ms = g->move_size, cap = (size_t)width * 16;
    char *cur = (char *)malloc((size_t)width * ss), *next = (char *)malloc((size_t)width * ss);
    char *child = (char *)malloc(ss), *moves = (char *)malloc((size_t)g->max_moves * ms);
    BeamCand *cand = (BeamCand *)malloc(cap * sizeof(BeamCand));
    char *cand_mv = (char *)malloc(cap * ms); /* the move of candidate `order` */
    /* per layer, made as the beam gets there: each position's parent in the layer before, and the move */
    int32_t **parent = (int32_t **)calloc((size_t)max_depth + 1, sizeof(int32_t *));
    char **via = (char **)calloc((size_t)max_depth + 1, sizeof(char *));
    if (!cur || !next || !child || !moves || !cand || !cand_mv || !parent || !via) {
        r = BEAM_NO_MEMORY;
        goto done;
    }
    memcpy(cur, root, ss);
    int ncur = 1;
    for (int depth = 0; depth < max_depth; depth++) {
        size_t ncand = 0;
        for (int p = 0; p < ncur; p++) {
            int nm = g->moves(game, cur + (size_t)p * ss, depth, moves);
            for (int q = 0; q < nm; q++) {
                const char *mv = moves + (size_t)q * ms;
                memcpy(child, cur + (size_t)p * ss, ss);
                g->apply(game, child, mv);
                if (g->made(game, child)) {
                    r = BEAM_STOP;
                    goto done;
                }
                if (g->won(game, child)) {
                    memcpy((char *)path + (size_t)depth * ms, mv, ms);
                    for (int d = depth, at = p; d > 0; d--) {
                        memcpy((char *)path + (size_t)(d - 1) * ms, via[d] + (size_t)at * ms, ms);
                        at = parent[d][at];
                    }
                    *path_len = depth + 1;
                    r = BEAM_WIN;
                    goto done;
                }
                if (ncand == cap) {
                    BeamCand *grown = (BeamCand *)realloc(cand, 2 * cap * sizeof(BeamCand));
                    if (grown != NULL)
                        cand = grown;
                    char *grown_mv = (char *)realloc(cand_mv, 2 * cap * ms);
                    if (grown_mv != NULL)
                        cand_mv = grown_mv;
                    if (grown == NULL || grown_mv == NULL) {
                        r = BEAM_NO_MEMORY;
                        goto done;
                    }
                    cap *= 2;
                }
                cand[ncand] = (BeamCand){g->worth(game, child), p, (int32_t)ncand};
                memcpy(cand_mv + ncand * ms, mv, ms);
                ncand++;
            }
        }
        qsort(cand, ncand, sizeof(BeamCand), beam_cand_cmp);
        parent[depth + 1] = (int32_t *)malloc((size_t)width * sizeof(int32_t));
        via[depth + 1] = (char *)malloc((size_t)width * ms);
        if (parent[depth + 1] == NULL || via[depth + 1] == NULL) {
            r = BEAM_NO_MEMORY;
            goto done;
        }
        int nnext = 0;
        for (size_t k = 0; k < ncand && nnext < width; k++) {
            char *t = next + (size_t)nnext * ss;
            const char *mv = cand_mv + (size_t)cand[k].order * ms;
            memcpy(t, cur + (size_t)cand[k].parent * ss, ss);
            g->apply(game, t, mv);
            if (!g->keep(game, t, depth + 1))
                continue;
            parent[depth + 1][nnext] = cand[k].parent;
            memcpy(via[depth + 1] + (size_t)nnext * ms, mv, ms);
            nnext++;
        }
        if (nnext == 0)
            break;
        char *swap = cur;
        cur = next;
        next = swap;
        ncur = nnext;
    }
done:
    for (int d = 0; d <= max_depth; d++) {
        if (parent != NULL)
            free(parent[d]);
        if (via != NULL)
            free(via[d]);
    }
    free(parent);
    free(via);
    free(cur);
    free(next);
    free(child);
    free(moves);
    free(cand);
    free(cand_mv);
    return r;
}

/* ---- a solve call: the position read, its start, its end and its answer to Python ---- */

/* Whether the n bytes are all cards (0..51); 0 with the exception set when not. */
static inline int cards_valid(const uint8_t *cards, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < n; j++)
        if (cards[j] >= 52) {
            PyErr_SetString(PyExc_ValueError, "a card is 0..51");
            return 0;
        }
    return 1;
}

/* A pile (bytes, bottom to top, at most max_cards) and its face-down count (an int within it)
 * into cards, *n and *down; 0 with the exception set when they are not that. The cards are the
 * caller's to check (cards_valid). */
static inline int read_pile(PyObject *pile, PyObject *down_count, int max_cards, uint8_t *cards, uint8_t *n,
                            uint8_t *down)
{
    long dn = PyLong_AsLong(down_count);
    if (!PyBytes_Check(pile) || PyBytes_GET_SIZE(pile) > max_cards || dn < 0 || dn > PyBytes_GET_SIZE(pile)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "a pile is bytes of at most %d cards, its face-down count within it",
                         max_cards);
        return 0;
    }
    *n = (uint8_t)PyBytes_GET_SIZE(pile);
    memcpy(cards, PyBytes_AS_STRING(pile), *n);
    *down = (uint8_t)dn;
    return 1;
}

/* The first n items of the list `found`, foundation heights (ints 0..13), into heights; 0 with
 * the exception set when they are not that. */
static inline int read_foundations(PyObject *found, int n, uint8_t *heights)
{
    for (int t = 0; t < n; t++) {
        long f = PyLong_AsLong(PyList_GET_ITEM(found, t));
        if (f < 0 || f > 13) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a foundation holds 0..13 cards");
            return 0;
        }
        heights[t] = (uint8_t)f;
    }
    return 1;
}

/* The outcome codes a solve hands back (_pysolver's UNKNOWN, WON, LOST, read by core.py). */
#define OUT_UNKNOWN 0
#define OUT_WON 1
#define OUT_LOST 2

/* What a pass (or a subtree of it) ends in. */
#define R_DEAD 0 /* no win below */
#define R_WIN 1
#define R_STOP 2 /* a budget, the clock or the stop flag */

/* The zones of a primitive move (src_zone, src, dst_zone, dst, count), as core.py's _ZONES
 * numbers them. */
#define Z_TAB 0
#define Z_FOUND 1
#define Z_STOCK 2
#define Z_WASTE 3

/* The start of a solve: its table of positions (ks_init) and the caller's stop flag (get_stop).
 * 0 with the exception set, and nothing held, when either fails. */
static inline int open_search(KeySet *table, size_t cap, size_t max_cap, int huge, PyObject *stop_obj,
                              Py_buffer *stop_view, volatile const uint8_t **stop)
{
    if (!ks_init(table, cap, max_cap, huge)) {
        PyErr_NoMemory();
        return 0;
    }
    if (!get_stop(stop_obj, stop_view, stop)) {
        ks_free(table);
        return 0;
    }
    return 1;
}

/* The end of a solve's search: the stop flag released and the table freed. */
static inline void close_search(KeySet *table, Py_buffer *stop_view)
{
    release_stop(stop_view);
    ks_free(table);
}

/* The outcome of a search: WON, else UNKNOWN when `unknown` (a search that did not see its whole
 * space, for a budget or a cut, proves nothing), else LOST. */
static inline int search_outcome(int won, int unknown)
{
    return won ? OUT_WON : unknown ? OUT_UNKNOWN : OUT_LOST;
}

/* Appends `item`, a new reference or NULL after a Python error, to `list`, which takes it over:
 * 0 on a Python error. */
static inline int append_new(PyObject *list, PyObject *item)
{
    int ok = item != NULL && PyList_Append(list, item) == 0;
    Py_XDECREF(item);
    return ok;
}

/* Appends the primitive move (src_zone, src, dst_zone, dst, count) to `out`: 0 on a Python error. */
static inline int push_move(PyObject *out, int src_zone, int src, int dst_zone, int dst, int count)
{
    return append_new(out, Py_BuildValue("(iiiii)", src_zone, src, dst_zone, dst, count));
}

/* A solve's answer: (outcome, moves, positions searched), `moves` taken over; NULL (the exception
 * set) when `moves` is NULL. */
static inline PyObject *solve_result(int outcome, PyObject *moves, uint64_t nodes)
{
    return moves == NULL ? NULL : Py_BuildValue("(iNK)", outcome, moves, (unsigned long long)nodes);
}

/* One beam (beam_search) of `width` from `root`, already recorded as seen, as a pass's result:
 * R_WIN with the line's moves in `path` and their count in *depth, R_DEAD, R_STOP, or -1 when
 * out of memory. */
static inline int beam_pass(const BeamGame *g, void *game, const void *root, int width, int max_depth, void *path,
                            int *depth)
{
    int len = 0;
    int r = beam_search(g, game, root, width, max_depth, path, &len);
    if (r == BEAM_WIN)
        *depth = len;
    return r == BEAM_WIN ? R_WIN : r == BEAM_STOP ? R_STOP : r == BEAM_DEAD ? R_DEAD : -1;
}

#endif
