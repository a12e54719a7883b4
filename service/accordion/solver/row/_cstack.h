/* The stacking games (Accordion and its peers): the state is the sequence of pile tops; depth
 * first with a dead-state table, move ordering and restarts (run_attempts). Included by
 * _csolver.c after _crow.h; _pysolver.py's stack_solve is its twin. */
#ifndef ACCORDION_ROW_CSTACK_H
#define ACCORDION_ROW_CSTACK_H

/* =====================================================================
 * Stacking games
 * ===================================================================== */

typedef struct {
    int near, far, right, strict, win_piles, goal;
    Budget b;
    KeySet dead;
    int path_src[MAXROW], path_dst[MAXROW];
    int depth_won;
} SCtx;

typedef struct {
    int src, dst;
    int key;
} SMove;

/*
 * The legal STACKs of a row of tops, in the engine's order (by source; left-near,
 * right-near, left-far, right-far), which is also the tie order for the sort.
 */
static int stack_moves(const SCtx *c, const uint8_t *t, int n, SMove *out)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        const uint8_t *m = MATCH[t[i]];
        int ln = i - c->near >= 0 && m[t[i - c->near]];
        int rn = c->right && i + c->near < n && m[t[i + c->near]];
        if (ln) { out[k].src = i; out[k].dst = i - c->near; k++; }
        if (rn) { out[k].src = i; out[k].dst = i + c->near; k++; }
        if (c->strict && (ln || rn))
            continue;
        if (i - c->far >= 0 && m[t[i - c->far]]) { out[k].src = i; out[k].dst = i - c->far; k++; }
        if (c->right && i + c->far < n && m[t[i + c->far]]) { out[k].src = i; out[k].dst = i + c->far; k++; }
    }
    return k;
}

static inline void stack_apply(const uint8_t *t, int n, int src, int dst, uint8_t *out)
{
    int j = 0;
    for (int i = 0; i < n; i++) {
        if (i == src)
            continue;
        out[j++] = (i == dst) ? t[src] : t[i];
    }
}

/* Sort moves by key, stable (insertion sort: the lists are short). */
static void sort_moves(SMove *mv, int k)
{
    for (int i = 1; i < k; i++) {
        SMove x = mv[i];
        int j = i - 1;
        while (j >= 0 && mv[j].key > x.key) {
            mv[j + 1] = mv[j];
            j--;
        }
        mv[j + 1] = x;
    }
}

/*
 * Accordion's Revenge: the goal card g must stay on top to the end, so no pile may move
 * onto it. With piles moving only leftward, a pile right of g can pass g only by a leap
 * that lands left of it, onto a matching top there. So, when piles lie right of g (at
 * position p), the position is dead when
 *   - near is 1 and p < far - 1: the pile at p+1 could only land on g or before the
 *     row's start, and g itself can only move further left, which keeps p < far - 1;
 *   - no top right of g matches a top left of g: until the first crossing each side's
 *     tops are a subset of its tops now, so no crossing can ever start.
 */
static int goal_blocked(const SCtx *c, const uint8_t *t, int n)
{
    int p = 0;
    while (p < n && t[p] != c->goal)
        p++;
    if (p >= n - 1)
        return 0;
    if (c->near == 1 && p < c->far - 1)
        return 1;
    int lr[13] = {0}, ls[4] = {0};
    for (int i = 0; i < p; i++) {
        lr[t[i] % 13]++;
        ls[t[i] / 13]++;
    }
    for (int i = p + 1; i < n; i++) {
        if (lr[t[i] % 13] || ls[t[i] / 13])
            return 0;
    }
    return 1;
}

static int sdfs(SCtx *c, const uint8_t *t, int n, int depth)
{
    int r = count_node(&c->b);
    if (r >= 0)
        return r;
    if (n <= c->win_piles && (c->goal < 0 || (n == 1 && t[0] == c->goal))) {
        c->depth_won = depth;
        return R_WIN;
    }
    /* The key: the set of tops (exact) and a hash of their order. Bit 63 marks a used slot. */
    uint64_t set = 0, h = 0;
    int rc[13] = {0}, sc[4] = {0};
    for (int i = 0; i < n; i++) {
        set |= 1ULL << t[i];
        h ^= ZOBRIST[i][t[i]];
        rc[t[i] % 13]++;
        sc[t[i] / 13]++;
    }
    set |= 1ULL << 63;
    if (ks_has(&c->dead, set, h))
        return R_DEAD;
    /*
     * A top that shares rank and suit with no other top can neither move nor be covered:
     * it stays a pile of its own to the end, and the other piles can never join it.
     */
    int isolated = 0;
    for (int i = 0; i < n; i++)
        isolated += rc[t[i] % 13] == 1 && sc[t[i] / 13] == 1;
    if (isolated && isolated + (n > isolated) > c->win_piles) {
        ks_add(&c->dead, set, h);
        return R_DEAD;
    }
    if (c->goal >= 0 && !c->right && goal_blocked(c, t, n)) {
        ks_add(&c->dead, set, h);
        return R_DEAD;
    }
    SMove mv[4 * MAXROW];
    int k = stack_moves(c, t, n, mv);
    int kk = 0;
    for (int j = 0; j < k; j++) {
        uint8_t buried = t[mv[j].dst];
        if (c->goal >= 0 && buried == c->goal)
            continue; /* the goal must stay on top to end on top */
        /*
         * The order (see docs/solver.md): first bury the top with the fewest partners, a
         * partner of the same rank counting three times one of the same suit (rank partners
         * are scarcer: at most 3 against 12), since that top is the next to be isolated;
         * then move the top with the fewest partners (the same weights); then the long move
         * before the short one; then the engine's order.
         */
        uint8_t kept = t[mv[j].src];
        int bury = 3 * (rc[buried % 13] - 1) + (sc[buried / 13] - 1);
        int keep = 3 * (rc[kept % 13] - 1) + (sc[kept / 13] - 1);
        if (keep > 31)
            keep = 31;
        int near_move = abs(mv[j].src - mv[j].dst) == c->near;
        int key = ((bury * 32 + keep) * 2 + near_move) * 4096 + j;
        if (c->b.noisy)
            key = (int)(((unsigned)key & ~4095u) + (unsigned)(splitmix(&c->b.rng) & 4095));
        mv[kk] = mv[j];
        mv[kk].key = key;
        kk++;
    }
    sort_moves(mv, kk);
    uint8_t child[MAXROW];
    for (int j = 0; j < kk; j++) {
        stack_apply(t, n, mv[j].src, mv[j].dst, child);
        c->path_src[depth] = mv[j].src;
        c->path_dst[depth] = mv[j].dst;
        r = sdfs(c, child, n - 1, depth + 1);
        if (r != R_DEAD)
            return r;
    }
    ks_add(&c->dead, set, h);
    return R_DEAD;
}

static int stack_attempt(void *c, const void *tops, int n) { return sdfs((SCtx *)c, (const uint8_t *)tops, n, 0); }

#endif
