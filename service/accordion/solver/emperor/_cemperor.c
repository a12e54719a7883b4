/*
 * _cemperor: the compiled Emperor search of accordion.solver (docs/solver.md, "Emperor"),
 * mirrored step for step by _pyemperor.py (same move order, same node counts, same verdicts).
 *
 * The position is plain data: ten tableau piles (bottom to top, face-down cards first), how
 * many cards of each are face down, eight foundation heights (suit s: foundations s and s + 4,
 * a card going to the first that takes it, as the engine does), and the talon: the waste
 * (bottom to top) then the stock (drawing order), ``cur`` the waste's length. One pass, one
 * card at a time: a card leaving the talon is deleted from it and ``cur`` becomes its index.
 * The two decks' equal cards are the same byte, so they are interchangeable in every key.
 *
 * Depth-first search with a table of every position visited (keyed on the piles as a
 * multiset, the talon and ``cur``; the foundations follow from the rest), so an exhausted
 * search proves the loss. Moves, argued in docs/solver.md: an Ace on top goes up as the only
 * move (compelled by the rules), then a *safe* card; a talon card in reach (no DRAW past an
 * Ace: it is compelled) is one macro move "draw to it, play it"; a card goes into the first
 * space only, and a lone card never into a space. Beams first (beam(), worth(): the best
 * positions of each layer kept, widths doubling, each width over the cut's moves then over
 * the full ones), then quick passes: the first moves a card
 * off a face-up card only when the card uncovered is of use at once, the restarts after it
 * shake the move order (and every second one drops that cut); the beams and the quick passes
 * may miss wins, so when they find none the full search runs from scratch. The GIL is released; the budgets and the
 * caller's stop flag are read every 1024 positions.
 */
#include "_ccommon.h"
#include "_cschedule.h"

#define NPILES 10
#define MAXPILE 48
#define MAXTALON 104
#define MAXMOVES 2048
#define MAXDEPTH 1000
#define MAX_SLOTS ((size_t)1 << 23)
/* Positions of the first quick pass (the plain move order), of each restart (the move order
 * shaken), and of all the quick passes together (see emperor_solve): with a budget its share
 * (QUICK_PERCENT) is what binds; QUICK_TOTAL bounds the passes of a search with no budget. */
#define QUICK_NODES 200000
#define RESTART_NODES 50000
#define QUICK_TOTAL 16000000
/* Every so many restarts, a quick pass takes the full search's moves instead of the cuts. */
#define FULL_MOVES_EVERY 2
/* The beams, before the quick passes: widths BEAM_FIRST, twice that, ... up to BEAM_LAST (with
 * the cut's moves alone, 4096 and 8192 won no deal of 100 at 4 M positions that the narrower
 * ones or the restarts after them did not; docs/solver.md, "Emperor"). */
#define BEAM_FIRST 16
#define BEAM_LAST 2048
/* The quick passes' share of a node or time budget, in per cent: the full search has the rest.
 * Every win measured came from a quick pass (docs/solver.md, "Emperor"), hence three quarters. */
#define QUICK_PERCENT 75

enum { M_TAB_FOUND, M_TAB_TAB, M_TAL_FOUND, M_TAL_TAB };

typedef struct {
    uint8_t kind, src, dst, tidx;
} EMove;

typedef struct {
    uint8_t card[NPILES][MAXPILE];
    uint8_t n[NPILES], down[NPILES];
    uint8_t found[8];
    uint8_t talon[MAXTALON];
    uint8_t tlen, cur;
} EState;

typedef struct {
    uint64_t nodes, max_nodes;
    double deadline;
    volatile const uint8_t *stop;
    int stopped, truncated;
    int quick; /* a quick pass: it looks for a win only (its failure proves nothing) */
    int cut;   /* the quick pass's cut: a card off a face-up card only to use the card uncovered */
    int noisy;    /* a restart: the move order is shaken by ``rng`` */
    uint64_t rng; /* SplitMix64 state of the restart noise */
    double quick_deadline; /* the quick passes stop here (their share of a time budget), 0: none */
    int quick_over;        /* a quick pass ran out of its share of the time */
    KeySet seen;
    EState root; /* the position searched: every pass of the scheduler starts here */
    int root_down, best; /* best: the most progress of a position made (note_progress) */
    int depth;
    EMove path[MAXDEPTH];
    EState st[MAXDEPTH + 1];
    EMove moves[MAXDEPTH + 1][MAXMOVES];
} Ctx;

static uint64_t ZP[2][MAXPILE][52], ZDOWN[2][MAXPILE + 1], ZT[2][MAXTALON][52], ZCUR[2][MAXTALON + 1];

static inline int rank_of(int c) { return c % 13 + 1; }
static inline int suit_of(int c) { return c / 13; }
static inline int red_suit(int s) { return s == 1 || s == 2; }
static inline int builds_on(int x, int host)
{
    return rank_of(host) == rank_of(x) + 1 && red_suit(suit_of(host)) != red_suit(suit_of(x));
}

static void key_of(const EState *s, uint64_t *a, uint64_t *b)
{
    uint64_t h[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < NPILES; i++) {
            uint64_t p = ZDOWN[w][s->down[i]];
            for (int j = 0; j < s->n[i]; j++)
                p += ZP[w][j][s->card[i][j]];
            h[w] += mix64(p + (uint64_t)w); /* a sum: the piles' order never matters */
        }
        for (int j = 0; j < s->tlen; j++)
            h[w] += ZT[w][j][s->talon[j]]; /* by position: equal cards are not a set */
        h[w] ^= ZCUR[w][s->cur];
    }
    *a = h[0];
    *b = h[1] | 1;
}

/* The foundation card x goes onto (its suit's first that takes it), or -1. */
static inline int home(const EState *s, int x)
{
    int su = suit_of(x), below = rank_of(x) - 1;
    if (s->found[su] == below)
        return su;
    if (s->found[su + 4] == below)
        return su + 4;
    return -1;
}

/* Nothing could ever be built on x (every opposite-colour card one lower, both decks', is
 * up, and nothing comes back from a foundation): x does nothing on the tableau that it does
 * not do better on its foundation. A 2 carries only an Ace, and Aces are compelled up. */
static int safe(const EState *s, int x)
{
    int r = rank_of(x), su = suit_of(x);
    if (r <= 2)
        return 1;
    for (int t = 0; t < 4; t++) {
        if (red_suit(t) != red_suit(su)) {
            int lo = s->found[t] < s->found[t + 4] ? s->found[t] : s->found[t + 4];
            if (lo < r - 1)
                return 0;
        }
    }
    return 1;
}

/* The talon cards playable now: the waste's top, then each stock card a DRAW brings up, up
 * to the first Ace (an Ace on the waste is compelled, so nothing is drawn past it). */
static int reach(const EState *s, uint8_t *idx)
{
    int k = 0;
    if (s->cur > 0)
        idx[k++] = (uint8_t)(s->cur - 1);
    for (int p = s->cur; p < s->tlen; p++) {
        idx[k++] = (uint8_t)p;
        if (rank_of(s->talon[p]) == 1)
            break;
    }
    return k;
}

static int can_receive(const EState *s, int x, int skip, const uint8_t *idx, int nt)
{
    for (int q = 0; q < nt; q++)
        if (builds_on(s->talon[idx[q]], x))
            return 1;
    for (int t = 0; t < NPILES; t++)
        if (t != skip && s->n[t] && builds_on(s->card[t][s->n[t] - 1], x))
            return 1;
    return 0;
}

static int first_empty(const EState *s)
{
    for (int i = 0; i < NPILES; i++)
        if (s->n[i] == 0)
            return i;
    return -1;
}

static inline void add(EMove *m, int *k, int kind, int src, int dst, int tidx)
{
    if (*k >= MAXMOVES)
        return;
    EMove *x = &m[(*k)++];
    x->kind = (uint8_t)kind;
    x->src = (uint8_t)src;
    x->dst = (uint8_t)dst;
    x->tidx = (uint8_t)tidx;
}

/* x onto every pile that takes it (not its own, src; -1 for the talon), then into the first space. */
static void onto(const EState *s, int x, int src, EMove *m, int *k, int kind, int tidx)
{
    for (int t = 0; t < NPILES; t++)
        if (t != src && s->n[t] && builds_on(x, s->card[t][s->n[t] - 1]))
            add(m, k, kind, src < 0 ? 0 : src, t, tidx);
    int e = first_empty(s);
    if (e >= 0)
        add(m, k, kind, src < 0 ? 0 : src, e, tidx);
}

static int gen_moves(const Ctx *c, const EState *s, EMove *m)
{
    int k = 0;
    for (int i = 0; i < NPILES; i++) /* compelled Aces */
        if (s->n[i] && rank_of(s->card[i][s->n[i] - 1]) == 1) {
            add(m, &k, M_TAB_FOUND, i, 0, 0);
            return k;
        }
    if (s->cur > 0 && rank_of(s->talon[s->cur - 1]) == 1) {
        add(m, &k, M_TAL_FOUND, 0, 0, s->cur - 1);
        return k;
    }
    for (int i = 0; i < NPILES; i++)
        if (s->n[i]) {
            int x = s->card[i][s->n[i] - 1];
            if (home(s, x) >= 0 && safe(s, x)) {
                add(m, &k, M_TAB_FOUND, i, 0, 0);
                return k;
            }
        }
    if (s->cur > 0) {
        int x = s->talon[s->cur - 1];
        if (home(s, x) >= 0 && safe(s, x)) {
            add(m, &k, M_TAL_FOUND, 0, 0, s->cur - 1);
            return k;
        }
    }
    /* 1. tableau tops to the foundations */
    for (int i = 0; i < NPILES; i++)
        if (s->n[i] && home(s, s->card[i][s->n[i] - 1]) >= 0)
            add(m, &k, M_TAB_FOUND, i, 0, 0);
    /* 2. tops that turn a card, the pile with most face down first */
    int maxdown = 0;
    for (int i = 0; i < NPILES; i++)
        if (s->down[i] > maxdown)
            maxdown = s->down[i];
    for (int dn = maxdown; dn >= 1; dn--)
        for (int i = 0; i < NPILES; i++)
            if (s->down[i] == dn && s->n[i] == dn + 1)
                onto(s, s->card[i][dn], i, m, &k, M_TAB_TAB, 0);
    /* 3. talon cards to the foundations, then onto the piles */
    uint8_t idx[MAXTALON + 1];
    int nt = reach(s, idx);
    for (int q = 0; q < nt; q++)
        if (home(s, s->talon[idx[q]]) >= 0)
            add(m, &k, M_TAL_FOUND, 0, 0, idx[q]);
    for (int q = 0; q < nt; q++)
        if (rank_of(s->talon[idx[q]]) != 1) /* a drawn Ace is compelled: it only goes up */
            onto(s, s->talon[idx[q]], -1, m, &k, M_TAL_TAB, idx[q]);
    /* 4. lone cards onto other piles (they leave a space) */
    for (int i = 0; i < NPILES; i++)
        if (s->n[i] == 1 && s->down[i] == 0)
            for (int t = 0; t < NPILES; t++)
                if (t != i && s->n[t] && builds_on(s->card[i][0], s->card[t][s->n[t] - 1]))
                    add(m, &k, M_TAB_TAB, i, t, 0);
    /* 5. tops off face-up cards */
    for (int i = 0; i < NPILES; i++) {
        int n = s->n[i];
        if (n - s->down[i] < 2)
            continue;
        if (c->cut) { /* only to use the card uncovered at once */
            int under = s->card[i][n - 2];
            if (home(s, under) < 0 && !can_receive(s, under, i, idx, nt))
                continue;
        }
        onto(s, s->card[i][n - 1], i, m, &k, M_TAB_TAB, 0);
    }
    return k;
}

static inline void turn_up(EState *s, int i)
{
    if (s->n[i] > 0 && s->down[i] >= s->n[i])
        s->down[i] = (uint8_t)(s->n[i] - 1);
}

static int take_talon(EState *s, int q)
{
    int x = s->talon[q];
    memmove(s->talon + q, s->talon + q + 1, (size_t)(s->tlen - q - 1));
    s->tlen--;
    s->cur = (uint8_t)q;
    return x;
}

static void apply(EState *s, const EMove *mv)
{
    int x;
    switch (mv->kind) {
    case M_TAB_FOUND:
        x = s->card[mv->src][--s->n[mv->src]];
        s->found[home(s, x)]++;
        turn_up(s, mv->src);
        break;
    case M_TAB_TAB:
        s->card[mv->dst][s->n[mv->dst]++] = s->card[mv->src][--s->n[mv->src]];
        turn_up(s, mv->src);
        break;
    case M_TAL_FOUND:
        x = s->talon[mv->tidx];
        s->found[home(s, x)]++;
        take_talon(s, mv->tidx);
        break;
    default:
        x = take_talon(s, mv->tidx);
        s->card[mv->dst][s->n[mv->dst]++] = (uint8_t)x;
        break;
    }
}

/* Legal moves may not fit in the compact position (a pile past MAXPILE): such a child is
 * not searched (only hand-made positions come near it; the root is checked on entry). */
static int fits(const EState *s, const EMove *mv)
{
    return !((mv->kind == M_TAB_TAB || mv->kind == M_TAL_TAB) && s->n[mv->dst] >= MAXPILE);
}

/* Won once the talon is empty and every pile is face up and built down in alternating colours
 * from its bottom card (always so in play: a card turns up only as a top, and only builds go on
 * it): every card under a top is higher than it, so the lowest top can always go up next. */
static int is_won(const EState *s)
{
    if (s->tlen)
        return 0;
    for (int i = 0; i < NPILES; i++) {
        if (s->down[i])
            return 0;
        for (int j = 1; j < s->n[i]; j++)
            if (!builds_on(s->card[i][j], s->card[i][j - 1]))
                return 0;
    }
    return 1;
}

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
 * reach until the cards above it are played) and spaces. */
#define W_HOME 10
#define W_DOWN 12
#define W_BURIED 3
#define W_SPACE 5

static int worth(const EState *s)
{
    int v = -W_BURIED * (s->cur > 0 ? s->cur - 1 : 0);
    for (int t = 0; t < 8; t++)
        v += W_HOME * s->found[t];
    for (int i = 0; i < NPILES; i++)
        v += s->n[i] == 0 ? W_SPACE : -W_DOWN * s->down[i];
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

/* ---- Python entry ---- */

static int read_position(PyObject *piles, PyObject *downs, PyObject *found, PyObject *talon, int cur, EState *s)
{
    memset(s, 0, sizeof *s);
    if (!PyList_Check(piles) || !PyList_Check(downs) || !PyList_Check(found) || !PyBytes_Check(talon)) {
        PyErr_SetString(PyExc_TypeError, "piles: list of bytes, downs: list of int, found: list of 8 int, talon: bytes");
        return 0;
    }
    if (PyList_GET_SIZE(piles) != NPILES || PyList_GET_SIZE(downs) != NPILES || PyList_GET_SIZE(found) != 8) {
        PyErr_SetString(PyExc_ValueError, "10 piles, one face-down count a pile, 8 foundations");
        return 0;
    }
    for (Py_ssize_t i = 0; i < NPILES; i++) {
        if (!read_pile(PyList_GET_ITEM(piles, i), PyList_GET_ITEM(downs, i), MAXPILE, s->card[i], &s->n[i],
                       &s->down[i]) ||
            !cards_valid(s->card[i], s->n[i]))
            return 0;
        turn_up(s, (int)i);
    }
    if (!read_foundations(found, 8, s->found))
        return 0;
    if (PyBytes_GET_SIZE(talon) > MAXTALON || cur < 0 || cur > PyBytes_GET_SIZE(talon)) {
        PyErr_SetString(PyExc_ValueError, "the talon holds at most 104 cards and cur is within it");
        return 0;
    }
    s->tlen = (uint8_t)PyBytes_GET_SIZE(talon);
    memcpy(s->talon, PyBytes_AS_STRING(talon), s->tlen);
    if (!cards_valid(s->talon, s->tlen))
        return 0;
    s->cur = (uint8_t)cur;
    return 1;
}

static PyObject *py_emperor_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"piles", "downs", "found", "talon", "cur", "max_nodes", "max_seconds", "stop",
                             "quick_nodes", "restart_nodes", "quick_total", "full_moves_every", "quick_percent",
                             "beam_first", "beam_last", "progress", NULL};
    PyObject *piles, *downs, *found, *talon, *stop_obj = NULL, *progress_obj = NULL;
    int cur, full_moves_every = FULL_MOVES_EVERY, quick_percent = QUICK_PERCENT;
    int beam_first = BEAM_FIRST, beam_last = BEAM_LAST;
    unsigned long long max_nodes = 0, quick_nodes = QUICK_NODES, restart_nodes = RESTART_NODES,
                       quick_total = QUICK_TOTAL;
    double max_seconds = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOi|KdOKKKiiiiO", kwlist, &piles, &downs, &found, &talon, &cur,
                                     &max_nodes, &max_seconds, &stop_obj, &quick_nodes, &restart_nodes,
                                     &quick_total, &full_moves_every, &quick_percent, &beam_first, &beam_last,
                                     &progress_obj))
        return NULL;
    Ctx *c = (Ctx *)calloc(1, sizeof(Ctx));
    if (c == NULL)
        return PyErr_NoMemory();
    if (!read_position(piles, downs, found, talon, cur, &c->st[0])) {
        free(c);
        return NULL;
    }
    EState root = c->st[0];
    for (int i = 0; i < NPILES; i++)
        c->root_down += root.down[i];
    Py_buffer stop_view, progress_view;
    if (!open_search_progress(&c->seen, (size_t)1 << 14, MAX_SLOTS, 0, stop_obj, &stop_view, &c->stop, progress_obj,
                              &progress_view)) {
        free(c);
        return NULL;
    }
    int r, ok = 1;
    /* Passes that look for a win only, and whose failure proves nothing: first the beams, of
     * width beam_first, twice that, ... up to beam_last, each over the first quick pass's moves
     * (the cut), then over the full search's (they win different deals); then the quick
     * passes: the first in the plain move order with the cut (quick_nodes positions), then
     * restarts with the move order shaken (restart_nodes positions each), every
     * full_moves_every-th of them with the full search's moves, until quick_total positions in
     * all, beams included (never more than quick_percent of a node or time budget: the full
     * search keeps the rest). Then, from scratch, the full search, whose LOST is a proof
     * (_cschedule.h). */
    Schedule plan = {quick_nodes, restart_nodes, quick_total, full_moves_every, quick_percent, 100,
                     beam_first,  beam_last,     1};
    ScheduleCore core = {c,          &c->nodes,  &c->max_nodes, &c->stopped, &c->quick_over, sched_quick_pass,
                         sched_beam, sched_full, sched_reset};
    c->root = root;
    Py_BEGIN_ALLOW_THREADS
    c->deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    c->quick_deadline = schedule_quick_deadline(&plan, c->deadline, max_seconds);
    c->quick = 1;
    r = schedule_run(&plan, &core, max_nodes, &ok);
    Py_END_ALLOW_THREADS
    close_search_progress(&c->seen, &stop_view, &progress_view, c->best);
    int outcome = search_outcome(r == R_WIN, r == R_STOP || c->truncated);
    PyObject *moves = line_list(ok);
    if (moves != NULL && outcome == OUT_WON && !expand(c, root, moves))
        Py_CLEAR(moves);
    PyObject *res = solve_result(outcome, moves, c->nodes);
    free(c);
    return res;
}

static PyMethodDef methods[] = {
    {"emperor_solve", (PyCFunction)(void (*)(void))py_emperor_solve, METH_VARARGS | METH_KEYWORDS,
     "emperor_solve(piles, downs, found, talon, cur, max_nodes=0, max_seconds=0, stop=None, quick_nodes=200000, "
     "restart_nodes=50000, quick_total=16000000, full_moves_every=2, quick_percent=75, beam_first=16, "
     "beam_last=2048, progress=None) -> "
     "(outcome, [(src_zone, src, dst_zone, dst, count)], nodes); progress, a writable byte, gets the most "
     "progress of a position searched (cards on the foundations plus cards turned up)"},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__cemperor(void)
{
    uint64_t seed = 0x656D7065726F72ULL;
    for (int w = 0; w < 2; w++) {
        ZOBRIST_FILL(ZDOWN[w], &seed);
        ZOBRIST_FILL(ZP[w], &seed);
        ZOBRIST_FILL(ZT[w], &seed);
        ZOBRIST_FILL(ZCUR[w], &seed);
    }
    return create_core_module("_cemperor",
                              "The compiled Emperor search of accordion.solver (emperor/README.md).",
                              methods);
}
