/* _cstreets' depth-first attempts (included by _cstreets.c after _cstreets_pos.h): the moves
 * in their order, the restarts' noise, entering a position and the search */
#ifndef ACCORDION_CSTREETS_DFS_H
#define ACCORDION_CSTREETS_DFS_H

/* How soon pile i's most urgent card can go up: the least (rank - foundation height) over its
 * cards (1: it could go up now), 99 for an empty pile. */
static int pile_gap(const Ctx *c, int i, int *depth)
{
    int best = 99;
    *depth = 0;
    for (int j = 0; j < c->n[i]; j++) {
        int x = c->card[i][j], g = rank_of(x) - c->found[suit_of(x)];
        if (g <= best) {
            best = g;
            *depth = c->n[i] - 1 - j;
        }
    }
    return best;
}

/* The priority of a move off pile i (lower first): uncovering a card that goes up, then
 * emptying a pile, then digging toward the most urgent buried card (nearest to its foundation,
 * fewest cards above it); breaking a built pair (the card sits on one rank higher) later, and
 * covering a pile whose own urgent card is near later still; a move into a space after all. */
static inline int priority(const Ctx *c, int i, int t, int *gap, int *deep, int to_space)
{
    if (c->n[i] >= 2 && on_found(c, c->card[i][c->n[i] - 2]))
        return 0;
    if (c->n[i] == 1)
        return 1;
    /* pile_gap only for the piles a priority reads (gap -1: not made yet) */
    if (gap[i] < 0)
        gap[i] = pile_gap(c, i, &deep[i]);
    int p = 2 + 16 * (gap[i] < 7 ? gap[i] : 7) + (deep[i] < 15 ? deep[i] : 15);
    if (rank_of(c->card[i][c->n[i] - 2]) == rank_of(top(c, i)) + 1)
        p += 8;
    if (!to_space) {
        if (gap[t] < 0)
            gap[t] = pile_gap(c, t, &deep[t]);
        if (gap[t] <= 2)
            p += 4;
    }
    return p + (to_space ? 256 : 0);
}

/* Restart noise: 0 in the first attempt, then 0..15 from the attempt's generator. */
static inline int noise(Ctx *c)
{
    return c->attempt ? (int)(splitmix(&c->rng) & 15) : 0;
}

/* Every move worth trying, best first; a safe move to the foundations alone when there is one.
 * Card `last` (the one the move into this position moved; -1 at the root) does not move between
 * piles: x from A to B then from B to C leaves the position x from A to C gives (or, C = A, the
 * position before; C a space, the same multiset), and the position before is expanded with that
 * move among its own, so no position the search must reach is lost (docs/solver.md). */
static int gen_moves(Ctx *c, SMove *m, int last)
{
    int k = 0;
    for (int i = 0; i < c->npiles; i++)
        if (c->n[i] && on_found(c, top(c, i)) && safe(c, top(c, i))) {
            m[0].src = (uint8_t)i;
            m[0].dst = TO_FOUND;
            return 1;
        }
    for (int i = 0; i < c->npiles; i++)
        if (c->n[i] && on_found(c, top(c, i))) {
            m[k].src = (uint8_t)i;
            m[k++].dst = TO_FOUND;
        }
    int e = -1;
    for (int i = 0; i < c->npiles; i++)
        if (c->n[i] == 0) {
            e = i;
            break;
        }
    int first = k, prio[MAXMOVES], gap[MAXP], deep[MAXP];
    uint64_t tops = 0;
    for (int i = 0; i < c->npiles; i++) {
        gap[i] = -1;
        if (c->n[i])
            tops |= 1ULL << top(c, i);
    }
    for (int i = 0; i < c->npiles; i++) {
        if (c->n[i] == 0)
            continue;
        int x = top(c, i);
        if (x == last)
            continue;
        /* the piles whose top x builds on, in pile order (x is no host of itself, so not pile i) */
        unsigned to = 0;
        for (uint64_t h = c->hosts[x] & tops; h; h &= h - 1)
            to |= 1u << c->pile_of[__builtin_ctzll(h)];
        for (; to; to &= to - 1) {
            int t = __builtin_ctz(to);
            if (k < MAXMOVES) {
                prio[k] = priority(c, i, t, gap, deep, 0) + noise(c);
                m[k].src = (uint8_t)i;
                m[k++].dst = (uint8_t)t;
            }
        }
        if (e >= 0 && c->n[i] >= 2 && (c->space_any || rank_of(x) == 13) && k < MAXMOVES) {
            prio[k] = priority(c, i, e, gap, deep, 1) + noise(c);
            m[k].src = (uint8_t)i;
            m[k++].dst = (uint8_t)e;
        }
    }
    /* a stable insertion sort by priority (Python's sorted() gives the same order) */
    for (int q = first + 1; q < k; q++) {
        SMove mv = m[q];
        int p = prio[q], r = q - 1;
        while (r >= first && prio[r] > p) {
            m[r + 1] = m[r];
            prio[r + 1] = prio[r];
            r--;
        }
        m[r + 1] = mv;
        prio[r + 1] = p;
    }
    return k;
}

/* Whether the attempt that reached its allowance goes on to the end of the budget instead of
 * restarting: when what is left (of the budget; of the clock, at the rate so far) is less than
 * the next attempt's allowance, that attempt could not finish anyway, and this one keeps its
 * table and its progress (a search that ends within the budget still proves the loss). */
static int last_attempt(const Ctx *c)
{
    uint64_t next = 2 * c->attempt_nodes; /* the schedule's restarts_double */
    if (c->budget && c->budget - c->nodes < next)
        return 1;
    if (c->deadline > 0) {
        double now = now_seconds(), left = c->deadline - now, spent = now - c->start;
        if (spent > 0 && left * (double)c->nodes < spent * (double)next)
            return 1;
    }
    return 0;
}

/* Enter the current position: R_WIN, R_STOP, R_DEAD (seen before, or too deep), or -1 with
 * its moves in a new frame. */
static int enter(Ctx *c)
{
    c->nodes++;
    if (c->max_nodes && c->nodes > c->max_nodes) { /* the budget, or the attempt's allowance */
        if ((c->budget && c->nodes > c->budget) || !last_attempt(c))
            return R_STOP;
        c->max_nodes = c->budget; /* the last attempt runs on */
    }
    if ((c->nodes & 1023) == 0 &&
        ((c->stop != NULL && *c->stop) || (c->deadline > 0 && now_seconds() > c->deadline))) {
        c->stopped = 1;
        return R_STOP;
    }
    if (is_won(c))
        return R_WIN;
    uint64_t a, b;
    key_of(c, &a, &b);
    if (ks_has_or_add(&c->seen, a, b))
        return R_DEAD;
    if (c->frozen_test && frozen(c))
        return R_DEAD; /* no win from here: nothing below it to expand */
    if (c->depth >= MAXDEPTH) {
        c->truncated = 1;
        return R_DEAD;
    }
    if (c->depth >= c->nframes) {
        int n = c->nframes ? 2 * c->nframes : 256;
        Frame *f = (Frame *)realloc(c->frames, (size_t)n * sizeof(Frame));
        if (f == NULL) {
            c->truncated = 1; /* out of memory: treated as too deep */
            return R_DEAD;
        }
        c->frames = f;
        c->nframes = n;
    }
    Frame *f = &c->frames[c->depth];
    size_t at = c->depth ? c->frames[c->depth - 1].at + (size_t)c->frames[c->depth - 1].nm : 0;
    if (at + MAXMOVES > c->nkeys) {
        size_t n = c->nkeys ? 2 * c->nkeys : 4096;
        SMove *m = (SMove *)realloc(c->moves, n * sizeof(SMove));
        if (m != NULL)
            c->moves = m;
        MoveKey *k = (MoveKey *)realloc(c->keys, n * sizeof(MoveKey));
        if (k != NULL)
            c->keys = k;
        if (m == NULL || k == NULL) {
            c->truncated = 1; /* out of memory: treated as too deep */
            return R_DEAD;
        }
        c->nkeys = n;
    }
    f->at = (uint32_t)at;
    f->nm = gen_moves(c, c->moves + at, c->depth ? c->frames[c->depth - 1].card : -1);
    f->next = 0;
    /* each child's key now, its slot fetched while the search goes on: the probes of the
     * children wait for memory side by side, not one after the other */
    for (int q = 0; q < f->nm; q++) {
        child_key(c, c->moves[at + q], &c->keys[at + q], &a, &b);
        ks_prefetch(&c->seen, a, b);
    }
    return -1;
}

/* Depth-first search from the current position; on R_WIN the line is frames[0..depth-1]'s
 * last moves tried. (A loop with frames on the heap, not recursion: lines run long.) */
static int dfs(Ctx *c)
{
    int r = enter(c);
    if (r >= 0)
        return r;
    for (;;) {
        Frame *f = &c->frames[c->depth];
        if (f->next > 0)
            undo_keyed(c, c->moves[f->at + f->next - 1], f->card, &f->kept, f->kept_sum);
        if (f->next == f->nm) {
            if (c->depth == 0)
                return R_DEAD;
            c->depth--;
            continue;
        }
        int q = f->next++;
        SMove mv = c->moves[f->at + q];
        f->card = top(c, mv.src);
        do_keyed(c, mv, &c->keys[f->at + q], &f->kept, f->kept_sum);
        c->depth++;
        r = enter(c);
        if (r == R_WIN || r == R_STOP)
            return r;
        if (r == R_DEAD)
            c->depth--;
    }
}

#endif
