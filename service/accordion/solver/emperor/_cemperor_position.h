/*
 * _cemperor_position.h: Emperor's compact position (docs/solver.md, "Emperor"), its key, the
 * search's context and what plays a move on it. Part of the one core _cemperor.c, which
 * includes it after _ccommon.h and _cschedule.h; _cemperor_moves.h generates the moves and
 * _cemperor_search.h searches them.
 */
#ifndef CEMPEROR_POSITION_H
#define CEMPEROR_POSITION_H

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

#endif
