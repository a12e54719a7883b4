/* The frontiers of the passes that are not depth-first: a binary min-heap (the best-first
 * passes') and the beam pass (Spider's, Klondike's and Emperor's). Included by _ccommon.h after
 * its pass results (R_WIN, R_DEAD, R_STOP); every function is static. */
#ifndef ACCORDION_SOLVER_FRONTIER_H
#define ACCORDION_SOLVER_FRONTIER_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
