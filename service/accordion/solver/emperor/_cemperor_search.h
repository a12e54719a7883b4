/*
 * _cemperor_search.h: the Emperor search's passes: the depth-first search (the quick passes and
 * the full search), the beams, what the pass scheduler (_cschedule.h) asks of them, and the
 * win written out as primitive moves. Part of the one core _cemperor.c, after _cemperor_moves.h.
 */
#ifndef CEMPEROR_SEARCH_H
#define CEMPEROR_SEARCH_H

/* One more position: 1 when the search must stop (the node limit, the clock, the caller's stop
 * flag, or a quick pass's share of the time spent). */
static int count_node(Ctx *c)
{
    c->nodes++;
    if (c->max_nodes && c->nodes > c->max_nodes)
        return 1;
    if ((c->nodes & 1023) == 0) {
        if ((c->stop != NULL && *c->stop) || (c->deadline > 0 && now_seconds() > c->deadline)) {
            c->stopped = 1;
            return 1;
        }
        if (c->quick && c->quick_deadline > 0 && now_seconds() > c->quick_deadline) {
            c->quick_over = 1;
            return 1;
        }
    }
    return 0;
}

/* How far play got in a position: cards on the foundations plus cards turned up since the
 * root. The sampled Hint scores a world its search left undecided by the best of these (as
 * Klondike's progress_of); the search itself never reads it. */
static void note_progress(Ctx *c, const EState *s)
{
    int p = c->root_down;
    for (int t = 0; t < 8; t++)
        p += s->found[t];
    for (int i = 0; i < NPILES; i++)
        p -= s->down[i];
    if (p > c->best)
        c->best = p;
}

static int dfs(Ctx *c)
{
    const EState *s = &c->st[c->depth];
    if (count_node(c))
        return R_STOP;
    note_progress(c, s);
    if (is_won(s))
        return R_WIN;
    uint64_t a, b;
    key_of(s, &a, &b);
    if (ks_has(&c->seen, a, b))
        return R_DEAD;
    ks_add(&c->seen, a, b);
    if (c->depth >= MAXDEPTH) {
        c->truncated = 1;
        return R_DEAD;
    }
    EMove *moves = c->moves[c->depth];
    int nm = gen_moves(c, s, moves);
    if (c->noisy)
        shake_first_move(&c->rng, moves, nm, sizeof moves[0]);
    for (int q = 0; q < nm; q++) {
        if (!fits(s, &moves[q]))
            continue;
        c->st[c->depth + 1] = *s;
        apply(&c->st[c->depth + 1], &moves[q]);
        c->path[c->depth++] = moves[q];
        int r = dfs(c);
        if (r != R_DEAD)
            return r;
        c->depth--;
        s = &c->st[c->depth];
    }
    return R_DEAD;
}

/* ---- the beam pass (only ever reports a win) ---- */

/* The beam's worth of a position (only the order matters): cards home, face-down cards (each
 * one a card the search cannot use yet), waste cards under the waste's top (each one out of
 * reach until the cards above it are played), spaces, and the cards *needed soon*: a card at
 * most W_SOON_RANKS above its suit's lower foundation (the next card of that foundation, the
 * one after it, ...) costs W_SOON for every card over it (on its pile, or over it in the
 * waste), times how soon it is needed (3 the next, 2, 1); a waste card under the top that is
 * not needed soon costs W_LATER more. The needed-soon term took the wins at 1 M positions from
 * 22 to 40-45 of 50 (docs/solver.md, "Emperor", issue 31). */
#define W_HOME 10
#define W_DOWN 12
#define W_BURIED 3
#define W_SPACE 5
#define W_SOON_RANKS 3
#define W_SOON 3
#define W_LATER 2

/* How soon x is needed: W_SOON_RANKS for the next card of its suit's lower foundation (lo),
 * down to 1, then 0 (a card out is never at or under lo: both its copies would be home). */
static inline int soon(const int *lo, int x)
{
    int ahead = rank_of(x) - lo[suit_of(x)];
    return ahead <= W_SOON_RANKS ? W_SOON_RANKS + 1 - ahead : 0;
}

static int worth(const EState *s)
{
    int lo[4];
    for (int t = 0; t < 4; t++)
        lo[t] = s->found[t] < s->found[t + 4] ? s->found[t] : s->found[t + 4];
    int v = -W_BURIED * (s->cur > 0 ? s->cur - 1 : 0);
    for (int t = 0; t < 8; t++)
        v += W_HOME * s->found[t];
    for (int i = 0; i < NPILES; i++) {
        v += s->n[i] == 0 ? W_SPACE : -W_DOWN * s->down[i];
        for (int j = 0; j + 1 < s->n[i]; j++) /* the top has nothing over it */
            v -= W_SOON * (s->n[i] - 1 - j) * soon(lo, s->card[i][j]);
    }
    for (int j = 0; j + 1 < s->cur; j++) {
        int need = soon(lo, s->talon[j]);
        v -= need ? W_SOON * (s->cur - 1 - j) * need : W_LATER;
    }
    return v;
}

/* What a beam asks of Emperor (_ccommon.h's BeamGame): the current pass's moves that fit. */
static int beam_moves(void *game, const void *s, int depth, void *out)
{
    Ctx *c = (Ctx *)game;
    EMove *moves = (EMove *)out;
    (void)depth;
    int nm = gen_moves(c, (const EState *)s, moves), k = 0;
    for (int q = 0; q < nm; q++)
        if (fits((const EState *)s, &moves[q]))
            moves[k++] = moves[q];
    return k;
}

static void beam_apply(void *game, void *s, const void *mv)
{
    (void)game;
    apply((EState *)s, (const EMove *)mv);
}

static int beam_made(void *game, const void *s)
{
    if (count_node((Ctx *)game))
        return 1;
    note_progress((Ctx *)game, (const EState *)s);
    return 0;
}

static int beam_won(void *game, const void *s)
{
    (void)game;
    return is_won((const EState *)s);
}

static int beam_worth(void *game, const void *s)
{
    (void)game;
    return worth((const EState *)s);
}

/* Not seen before (then recorded). */
static int beam_keep(void *game, const void *s, int depth)
{
    Ctx *c = (Ctx *)game;
    uint64_t a, b;
    (void)depth;
    key_of((const EState *)s, &a, &b);
    if (ks_has(&c->seen, a, b))
        return 0;
    ks_add(&c->seen, a, b);
    return 1;
}

static const BeamGame EMPEROR_BEAM = {sizeof(EState), sizeof(EMove), MAXMOVES, beam_moves, beam_apply,
                                      beam_made,      beam_won,      beam_worth, beam_keep};

/* One beam of `width` from the root over the current pass's moves (_ccommon.h's beam_search, as
 * _cspider.c's): each layer is every move from every position of the one before, the `width`
 * best positions not seen before kept (worth, then the order they were made in). R_WIN with the
 * line in c->path/c->depth, R_DEAD when a layer is empty or MAXDEPTH is reached, R_STOP on a
 * budget or the stop flag, -1 when out of memory. A position counts as a node when it is made
 * (before its worth). */
static int beam(Ctx *c, const EState *root, int width)
{
    uint64_t a, b;
    key_of(root, &a, &b);
    ks_add(&c->seen, a, b);
    return beam_pass(&EMPEROR_BEAM, c, root, width, MAXDEPTH, c->path, &c->depth);
}

/* ---- what the pass scheduler (_cschedule.h) asks of Emperor ---- */

/* One quick pass from the root: noisy, with the cut or the full search's moves. */
static int sched_quick_pass(void *core, int noisy, int cut, uint64_t rng)
{
    Ctx *c = (Ctx *)core;
    c->noisy = noisy;
    c->cut = cut;
    c->rng = rng;
    c->depth = 0;
    c->st[0] = c->root;
    return dfs(c);
}

/* One beam from the root over the cut's moves or the full search's. */
static int sched_beam(void *core, int width, int cut)
{
    Ctx *c = (Ctx *)core;
    c->noisy = 0;
    c->cut = cut;
    return beam(c, &c->root, width);
}

static int sched_full(void *core)
{
    Ctx *c = (Ctx *)core;
    c->noisy = 0;
    c->cut = 0;
    c->quick = 0;
    c->depth = 0;
    c->truncated = 0;
    c->st[0] = c->root;
    return dfs(c);
}

static int sched_reset(void *core) { return ks_reset(&((Ctx *)core)->seen); }

/* ---- the win as primitive moves: (src_zone, src, dst_zone, dst, count) ---- */

static int expand(const Ctx *c, EState s, PyObject *out)
{
    for (int q = 0; q < c->depth; q++) {
        const EMove *mv = &c->path[q];
        if (mv->kind == M_TAL_FOUND || mv->kind == M_TAL_TAB) {
            for (int k = mv->tidx + 1 - s.cur; k > 0; k--)
                if (!push_move(out, Z_STOCK, 0, Z_WASTE, 0, 0))
                    return 0;
            int x = s.talon[mv->tidx];
            if (!push_move(out, Z_WASTE, 0, mv->kind == M_TAL_FOUND ? Z_FOUND : Z_TAB,
                      mv->kind == M_TAL_FOUND ? home(&s, x) : mv->dst, 1))
                return 0;
        } else if (mv->kind == M_TAB_FOUND) {
            if (!push_move(out, Z_TAB, mv->src, Z_FOUND, home(&s, s.card[mv->src][s.n[mv->src] - 1]), 1))
                return 0;
        } else if (!push_move(out, Z_TAB, mv->src, Z_TAB, mv->dst, 1)) {
            return 0;
        }
        apply(&s, mv);
    }
    for (;;) { /* play out: the lowest top goes up */
        int best = -1;
        for (int i = 0; i < NPILES; i++)
            if (s.n[i] && (best < 0 || rank_of(s.card[i][s.n[i] - 1]) < rank_of(s.card[best][s.n[best] - 1])))
                best = i;
        if (best < 0)
            return 1;
        EMove mv = {M_TAB_FOUND, (uint8_t)best, 0, 0};
        if (!push_move(out, Z_TAB, best, Z_FOUND, home(&s, s.card[best][s.n[best] - 1]), 1))
            return 0;
        apply(&s, &mv);
    }
}

#endif
