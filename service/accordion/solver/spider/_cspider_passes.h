/* _cspider's depth-first search (the quick pass and the full search) and its beams, with the
 * worth of a position that the beams and the staged pass keep the best by (part of _cspider.c,
 * included after _cspider_position.h). */
#ifndef ACCORDION_CSPIDER_PASSES_H
#define ACCORDION_CSPIDER_PASSES_H

static int dfs(Ctx *c)
{
    const SState *s = &c->st[c->depth];
    if (count_node(c))
        return R_STOP;
    note_progress(c, s);
    if (is_won(c, s))
        return R_WIN;
    uint64_t a, b;
    key_of(c, s, &a, &b);
    if (ks_has(&c->seen, a, b))
        return R_DEAD;
    ks_add(&c->seen, a, b);
    if (c->depth >= MAXDEPTH) {
        c->truncated = 1;
        return R_DEAD;
    }
    SMove *moves = c->moves[c->depth];
    int nm = gen_moves(c, s, moves);
    for (int q = 0; q < nm; q++) {
        if (!fits(c, s, &moves[q]))
            continue;
        c->st[c->depth + 1] = *s;
        apply(c, &c->st[c->depth + 1], &moves[q]);
        c->path[c->depth++] = moves[q];
        int r = dfs(c);
        if (r != R_DEAD)
            return r;
        c->depth--;
        s = &c->st[c->depth];
    }
    return R_DEAD;
}

/* ---- the beam pass ---- */

/* A worth of a position (only the order of worths matters): suits lifted off, face-down
 * cards (each one a card the search cannot use yet), piles with a face-down card (none: the
 * pile can be emptied), spaces, and for every face-up card on another one whether it is built
 * in suit, built on the rank only, or a break. The stock is left out: a term for the cards
 * dealt (3 a card) made the beams DEAL early and won fewer deals (30 against 32 of 50 two-suit
 * deals). The staged pass weighs face-down cards, spaces and breaks more and a build on the
 * rank only not at all (docs/solver.md: the beams' weights there won none of four-suit seeds
 * 0-5). */
typedef struct {
    int found, down, down_pile, space, suited, ranked, brk;
} Weights;

static const Weights BEAM_WEIGHTS = {400, 12, 0, 30, 10, 4, 6};
static const Weights STAGE_WEIGHTS = {400, 40, 60, 60, 30, 0, 25};

static int worth(const SState *s, const Weights *w)
{
    int v = w->found * s->found;
    for (int i = 0; i < NPILES; i++) {
        int n = s->n[i], d = s->down[i];
        if (n == 0) {
            v += w->space;
            continue;
        }
        v -= w->down * d + (d ? w->down_pile : 0);
        for (int j = d + 1; j < n; j++) {
            int lo = s->card[i][j - 1], hi = s->card[i][j];
            if (lo == hi + 1 && rank_of(hi) != 13)
                v += w->suited;
            else if (rank_of(lo) == rank_of(hi) + 1)
                v += w->ranked;
            else
                v -= w->brk;
        }
    }
    return v;
}

/* What a beam asks of Spider (_ccommon.h's BeamGame): the quick pass's moves that fit. */
static int beam_moves(void *game, const void *s, int depth, void *out)
{
    const Ctx *c = (const Ctx *)game;
    SMove *moves = (SMove *)out;
    (void)depth;
    int nm = gen_moves(c, (const SState *)s, moves), k = 0;
    for (int q = 0; q < nm; q++)
        if (fits(c, (const SState *)s, &moves[q]))
            moves[k++] = moves[q];
    return k;
}

static void beam_apply(void *game, void *s, const void *mv) { apply((const Ctx *)game, (SState *)s, (const SMove *)mv); }

static int beam_made(void *game, const void *s)
{
    if (count_node((Ctx *)game))
        return 1;
    note_progress((Ctx *)game, (const SState *)s);
    return 0;
}

static int beam_won(void *game, const void *s) { return is_won((const Ctx *)game, (const SState *)s); }

static int beam_worth(void *game, const void *s)
{
    (void)game;
    return worth((const SState *)s, &BEAM_WEIGHTS);
}

/* Not seen before (then recorded). */
static int beam_keep(void *game, const void *s, int depth)
{
    Ctx *c = (Ctx *)game;
    uint64_t a, b;
    (void)depth;
    key_of(c, (const SState *)s, &a, &b);
    if (ks_has(&c->seen, a, b))
        return 0;
    ks_add(&c->seen, a, b);
    return 1;
}

static const BeamGame SPIDER_BEAM = {sizeof(SState), sizeof(SMove), MAXMOVES, beam_moves, beam_apply,
                                     beam_made,      beam_won,       beam_worth, beam_keep};

/* One beam of `width` from the root over the quick pass's moves (_ccommon.h's beam_search): each
 * layer is every move from every position of the one before, the `width` best positions not
 * seen before kept (worth, then the order they were made in). R_WIN with the line in
 * c->path/c->depth, R_DEAD when a layer is empty or MAXDEPTH is reached, R_STOP on a budget or
 * the stop flag, -1 when out of memory. A position counts as a node when it is made (before
 * its worth), as in the twin. */
static int beam(Ctx *c, const SState *root, int width)
{
    uint64_t a, b;
    key_of(c, root, &a, &b);
    ks_add(&c->seen, a, b);
    return beam_pass(&SPIDER_BEAM, c, root, width, MAXDEPTH, c->path, &c->depth);
}

/* Whether one more pass runs (no pass has won, budget and memory are left), with a fresh
 * table of positions seen when it does. */
static int next_pass(Ctx *c, uint64_t max_nodes, int r, int *ok)
{
    if (!*ok || r == R_WIN || c->stopped || (max_nodes && c->nodes >= max_nodes))
        return 0;
    *ok = ks_reset(&c->seen);
    return *ok;
}

#endif
