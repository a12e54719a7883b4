/*
 * _cklondike: the compiled Klondike search of accordion.solver (docs/solver.md, "Klondike"),
 * mirrored step for step by _pyklondike.py (same move order, same node counts, same verdicts).
 *
 * The position is plain data: the tableau piles (bottom to top, face-down cards first),
 * how many cards of each pile are face down, the foundations as a count per suit, and the
 * talon: the waste (bottom to top) followed by the stock (in drawing order), with ``cur``
 * the number of cards in the waste. A card that leaves the talon is deleted from it, so a
 * DRAW only moves ``cur`` on and a REDEAL sets it to 0: the stock is a cyclic index.
 *
 * Depth-first search with a table of every position visited (keyed on a canonical form:
 * the piles as a multiset, the talon, ``cur`` unless turning one with passes unlimited, the
 * redeals left; the foundations follow from the rest), so the first visit of a position is
 * its only expansion and an exhausted search proves the loss. The moves, each argued in
 * docs/solver.md:
 *   - a card that is safe on its foundation goes there as the only move (see safe());
 *   - a talon card is played in one macro move: the DRAWs (and REDEAL) that bring it to the
 *     top of the waste, then the card onto a foundation or a pile;
 *   - a King-headed run goes into the first empty pile only, and only off face-down cards;
 *   - a card comes back from a foundation only when some card not on the foundations could
 *     ever be built on it;
 *   - in the full search, a position whose piles and talon were seen with a ``cur`` that
 *     reaches every talon card this one reaches is not expanded (see dominated);
 *   - in every pass, a position in which some card can never depart from its place (so never
 *     goes home) is lost and not expanded (see stuck);
 *   - with partial runs, a run hung on one of two twins (the cards of a rank and colour) and the
 *     same run hung on the other are one position (equivalent runs: the key holds each pile's
 *     face-down cards and lowest face-up card, and the other face-up cards as a set; the moves
 *     choose nothing by which twin a run hangs on, see gen_moves and twin_home).
 * Between the quick passes, beams (beam(): layers of the best positions by a worth, widths
 * doubling) look for the wins the depth-first passes find late; like every quick pass they only
 * ever report a win.
 * The GIL is released; the budgets (nodes, seconds) and the caller's stop flag are read
 * every 1024 positions, as in _csolver.c.
 */
#include "_ccommon.h"
#include "_cschedule.h"

#define MAXP 10
#define MAXPILE 40
#define MAXTALON 52
/* Far more than a position has: a move puts a card on a pile top (each top takes two cards at
 * most: 14), a King into the first space (4), a card on its foundation (4), or a foundation's
 * top back (4 tops, two hosts or a space each: 12), ~34 in all. `add` drops what would overflow,
 * and dfs() then never claims LOST (a dropped move could have been the win). */
#define MAXMOVES 200
#define MAXDEPTH 1000
/* The table's limits (see table_limit): at least MAX_SLOTS; for a node budget (or none) up to
 * MAX_SLOTS_ANY (16 GiB, reached only by a search of 2^29 positions); with a time budget (the
 * service's searches: Solve, Hint, winnable deals), TABLE_RATE positions a second up to
 * MAX_SLOTS_TIMED (256 MiB), so a Solve holds at most twice what it held before whatever node
 * budget its caller names. Before issue 31 MAX_SLOTS was the limit of every search, so a full
 * search past about 4 M positions could never end. */
#define MAX_SLOTS ((size_t)1 << 23)
#define MAX_SLOTS_TIMED ((size_t)1 << 24)
#define MAX_SLOTS_ANY ((size_t)1 << 30)
#define TABLE_RATE 4e6
/* Positions of the first quick pass, which looks for a win only, of each restart, and of all of
 * them together (see klondike_solve): the first pass in the plain move order, the restarts with
 * restart noise. Restarts shorter than the first pass (docs/solver.md, "Restarts") make more of
 * them, which is where the late wins come from; the first pass keeps its 100,000 positions, in
 * which it finds the early wins and sees the whole cut space of most lost deals. */
#define QUICK_NODES 100000
#define RESTART_NODES 30000
#define QUICK_TOTAL 2000000
/* Every so many restarts, a quick pass takes the full search's moves instead of the cuts. */
#define FULL_MOVES_EVERY 2
/* The beams between the quick passes (docs/solver.md, *Beams*): one after each pass, widths
 * BEAM_FIRST_WIDTH, twice that, ... BEAM_LAST_WIDTH, within the quick passes' share of the
 * budget (the restarts get what they leave); turning three only unless asked (turning one they
 * cost the restarts more wins than they made). */
#define BEAM_FIRST_WIDTH 64
#define BEAM_LAST_WIDTH 2048

/* M_TWIN_HOME: a card covered by a run goes home after its run moves onto its twin, a pile top
 * (equivalent runs only: see gen_moves). */
enum { M_TAB_FOUND, M_TAL_FOUND, M_TAL_TAB, M_RUN, M_FOUND_TAB, M_TWIN_HOME };

typedef struct {
    uint8_t kind, src, dst, count, tidx, wrap;
} KMove;

typedef struct {
    uint8_t card[MAXP][MAXPILE];
    uint8_t n[MAXP], down[MAXP];
    uint8_t found[4];
    uint8_t talon[MAXTALON];
    uint8_t tlen, cur;
    int8_t redeals; /* redeals left; -1: unlimited */
    /* made from the talon when it changes (take_talon), not from its cards at every position: */
    uint64_t talon_set;    /* its cards, as a 52-bit set */
    uint64_t talon_key[2]; /* its part of the key (see key_base) */
    /* each pile's part of the key, made again by key_base only for the piles a move changed
     * (the bits of stale_piles; apply sets them) */
    uint64_t pile_key[MAXP][2];
    uint64_t pile_up[MAXP]; /* with equivalent runs: the pile's face-up cards above its lowest */
    uint16_t stale_piles;
} KState;

typedef struct {
    int npiles, draw, partial, fret, keep_cur, root_redeal;
    uint64_t nodes, max_nodes;
    double deadline;
    double quick_deadline; /* the quick passes end here: half a time budget (0: none) */
    int quick_over;        /* the quick passes ran out of their time */
    volatile const uint8_t *stop;
    int stopped, truncated; /* stopped: by the clock or the caller's flag */
    int quick; /* the first, quick passes: only a win they find counts */
    int cut;   /* a quick pass with the unproven cuts (talon cards and part runs only with a use at
                * once, no returns); the other quick passes take the full search's moves */
    int dominance; /* talon dominance in the full search (see dominated); off only for comparisons */
    int dead_ends; /* a position with a card that can never depart is not expanded (see stuck) */
    int twins;     /* equivalent runs (partial runs only): a run hung on either of two twins is one position */
    int safe_two;  /* safe() one rank further; off only for comparisons */
    int loose_safe; /* tests only: safe_two without its condition on the twin's suit (unsound) */
    int noisy; /* a restart of the quick pass: the move order is shaken by ``rng`` */
    int root_down, best; /* best: the most progress of a position visited (see progress_of) */
    uint64_t rng;
    KState *root; /* the position searched: every pass of the scheduler starts here */
    KeySet seen;
    int depth;
    KMove path[MAXDEPTH];
} Ctx;

/* The key's random words, two of each (the key's two halves); ZP and ZT hold a card's two side by
 * side, which key_base reads together. */
static uint64_t ZP[MAXPILE][52][2], ZDOWN[2][MAXPILE], ZT[52][2], ZCUR[2][MAXTALON + 1], ZRED[2][16], ZUP[2];

static inline int rank_of(int c) { return c % 13 + 1; }
static inline int suit_of(int c) { return c / 13; }
static inline int red_suit(int s) { return s == 1 || s == 2; }
static inline int red(int c) { return red_suit(c / 13); }
/* A card's twin: the other card of its rank and colour (spades and clubs, hearts and diamonds). */
static inline int twin_of(int c) { return (3 - c / 13) * 13 + c % 13; }

/* With passes unlimited, a waste whose length is a multiple of ``draw`` (or the whole talon)
 * reaches exactly the cards an empty waste reaches, so both are one position. */
static inline int canonical_cur(const Ctx *c, const KState *s)
{
    if (s->redeals < 0 && (s->cur % c->draw == 0 || s->cur == s->tlen))
        return 0;
    return s->cur;
}

/* The canonical key without ``cur``: piles summed as a multiset (their order never matters),
 * then the talon, the root's mark and the redeals left. key_at adds a value of ``cur``. */
static void key_base(const Ctx *c, KState *s, uint64_t *h)
{
    /* Equivalent runs (docs/solver.md, "Klondike", *Equivalent runs*): a pile is its face-down
     * cards and its lowest face-up card; the face-up cards above those are one set, whichever
     * twin each run hangs on. Both words are made in one pass over the cards. */
    uint64_t up = 0, h0 = 0, h1 = 0;
    for (int i = 0; i < c->npiles; i++) {
        if (s->stale_piles >> i & 1) {
            int dn = s->down[i], n = s->n[i];
            const uint8_t *p = s->card[i];
            uint64_t pu = 0;
            if (c->twins && n > dn) {
                for (int j = dn + 1; j < n; j++)
                    pu |= 1ULL << p[j];
                n = dn + 1;
            }
            s->pile_up[i] = pu;
            uint64_t p0 = ZDOWN[0][dn], p1 = ZDOWN[1][dn];
            for (int j = 0; j < n; j++) {
                p0 += ZP[j][p[j]][0];
                p1 += ZP[j][p[j]][1];
            }
            s->pile_key[i][0] = mix64(p0);
            s->pile_key[i][1] = mix64(p1 + 1);
        }
        up |= s->pile_up[i];
        h0 += s->pile_key[i][0];
        h1 += s->pile_key[i][1];
    }
    s->stale_piles = 0;
    if (c->twins) {
        h0 ^= mix64(up + ZUP[0]);
        h1 ^= mix64(up + ZUP[1]);
    }
    h0 ^= s->talon_key[0]; /* the talon's cards, each's ZT words */
    h1 ^= s->talon_key[1];
    if (c->depth == 0 && !c->root_redeal) { /* the root may not REDEAL: not the same position later */
        h0 ^= ZCUR[0][MAXTALON];
        h1 ^= ZCUR[1][MAXTALON];
    }
    h[0] = h0 ^ ZRED[0][(s->redeals + 1) & 15];
    h[1] = h1 ^ ZRED[1][(s->redeals + 1) & 15];
}

static inline void key_at(const Ctx *c, const uint64_t *h, int cur, uint64_t *a, uint64_t *b)
{
    *a = c->keep_cur ? h[0] ^ ZCUR[0][cur] : h[0];
    *b = (c->keep_cur ? h[1] ^ ZCUR[1][cur] : h[1]) | 1; /* never the empty slot */
}

/* Talon dominance (docs/solver.md, "Klondike", *A waste that reaches more*). With passes
 * unlimited and a REDEAL allowed, the talon cards in reach from ``cur`` are R(cur) =
 * {cur-1, cur-1+d, cur-1+2d, ...} plus the last card plus R(0) (the ones a REDEAL brings), so
 * R(cur) holds R(cur + d) and every R holds R(0); playing a talon card sets ``cur`` to its
 * index whatever ``cur`` was, and every other move's test reads the cards in reach only as
 * "some card in reach ..." (more cards, more moves). So a position already seen with the same
 * piles and talon and a ``cur`` of the same class mod d that is no larger (or, when ``cur`` is
 * canonically 0, any ``cur``) has every move this one has, to the same or a dominating
 * position: this one can add nothing. Returns whether such a position is in the table. */
static int dominated(const Ctx *c, const KState *s, const uint64_t *h)
{
    int cur = canonical_cur(c, s), d = c->draw, n = 0;
    uint64_t a[MAXTALON], b[MAXTALON]; /* the keys of the ``cur`` that dominate this one */
    if (cur == 0) {
        for (int q = 1; q < s->tlen; q++)
            if (q % d != 0)
                key_at(c, h, q, &a[n], &b[n]), n++;
    } else {
        for (int q = cur - d; q >= 1; q -= d)
            key_at(c, h, q, &a[n], &b[n]), n++;
    }
    for (int k = 0; k < n; k++)
        ks_prefetch(&c->seen, a[k], b[k]);
    for (int k = 0; k < n; k++)
        if (ks_has(&c->seen, a[k], b[k]))
            return 1;
    return 0;
}

/* Whether card x can do nothing on the tableau that it cannot do better on its foundation:
 * every card that could ever be built on it (opposite colour one lower, then same colour
 * two lower, ...) is on the foundations. Without foundation_return those cards stay there,
 * so the opposite colour one lower is enough; with it, the other suit of its colour two
 * lower must be up too (a card brought back could otherwise carry it).
 * One rank further (issue 31, docs/solver.md, *Safe one rank further*): also when both suits of
 * the other colour are up to rank - 2 and its twin's suit to rank - 3 (with foundation_return,
 * rank - 2, which the rule above then needs no more): a card of the other colour one lower can
 * then go up whenever it could go onto x, and with it whatever could be built on it, so sending
 * those up instead keeps every win. `loose_safe` (tests only) drops the twin's suit from that
 * rule, which makes it unsound: the brute-force test shows a position it gets wrong. */
static int safe(const Ctx *c, const KState *s, int x)
{
    int r = rank_of(x), su = suit_of(x);
    if (r <= 2)
        return 1;
    int near = 1, two_lower = c->safe_two, twin_low = c->fret ? r - 2 : r - 3;
    for (int t = 0; t < 4; t++) {
        if (t == su)
            continue;
        if (red_suit(t) != red_suit(su)) {
            if (s->found[t] < r - 1)
                near = 0;
            if (s->found[t] < r - 2)
                two_lower = 0;
        } else {
            if (c->fret && s->found[t] < r - 2)
                near = 0;
            if (s->found[t] < twin_low && !c->loose_safe)
                two_lower = 0;
        }
    }
    return near || two_lower;
}

static inline int on_found(const KState *s, int x) { return s->found[suit_of(x)] == rank_of(x) - 1; }

static inline int builds_on(int x, int host) { return rank_of(host) == rank_of(x) + 1 && red(host) != red(x); }

/* Whether a card of rank r and suit su, back on the tableau, could ever carry a card that is
 * not on the foundations (a lower card of the right colour still out). */
static int worth_returning(const KState *s, int r, int su)
{
    for (int t = 0; t < 4; t++) {
        if (t == su)
            continue;
        if (red_suit(t) != red_suit(su)) {
            if (s->found[t] < r - 1)
                return 1;
        } else if (s->found[t] < r - 2) {
            return 1;
        }
    }
    return 0;
}

/* The talon cards playable now: the waste's top, the cards that DRAWs bring there, and with
 * a REDEAL allowed the ones drawn after it (wrap). Returns how many, in idx/wrap. */
static int talon_reach(const Ctx *c, const KState *s, uint8_t *idx, uint8_t *wrap)
{
    int k = 0, L = s->tlen, d = c->draw;
    uint8_t seen[MAXTALON];
    memset(seen, 0, sizeof seen);
    if (s->cur > 0) {
        idx[k] = (uint8_t)(s->cur - 1);
        wrap[k++] = 0;
        seen[s->cur - 1] = 1;
    }
    for (int p = s->cur; p < L;) {
        p = p + d < L ? p + d : L;
        idx[k] = (uint8_t)(p - 1);
        wrap[k++] = 0;
        seen[p - 1] = 1;
    }
    int can_redeal = s->redeals != 0 && (c->depth > 0 || c->root_redeal);
    if (can_redeal) {
        for (int p = 0; p < L;) {
            p = p + d < L ? p + d : L;
            if (!seen[p - 1]) {
                idx[k] = (uint8_t)(p - 1);
                wrap[k++] = 1;
            }
        }
    }
    return k;
}

static inline void add(KMove *m, int *k, int kind, int src, int dst, int count, int tidx, int wrap)
{
    if (*k >= MAXMOVES)
        return;
    KMove *x = &m[(*k)++];
    x->kind = (uint8_t)kind;
    x->src = (uint8_t)src;
    x->dst = (uint8_t)dst;
    x->count = (uint8_t)count;
    x->tidx = (uint8_t)tidx;
    x->wrap = (uint8_t)wrap;
}

static int first_empty(const Ctx *c, const KState *s)
{
    for (int i = 0; i < c->npiles; i++)
        if (s->n[i] == 0)
            return i;
    return -1;
}

/* The cards that could be built on each card (opposite colour, one rank lower), as 52-bit sets. */
static uint64_t BUILDERS[52];
/* The hosts of each card (opposite colour, one rank higher), as 52-bit sets. */
static uint64_t BUILDERS_OF_HOSTS[52];

/* The cards free to be built onto another card right now, as 52-bit sets: the talon cards in
 * reach, the face-up cards of each pile that head a movable run, and with foundation_return
 * the foundations' tops. Made once a position, so can_receive is two AND operations. */
typedef struct {
    uint64_t others; /* talon in reach | foundation tops */
    uint64_t piles;  /* every pile's movable heads */
    uint64_t pile[MAXP];
    uint64_t onto[MAXP]; /* the cards that build on each pile's top (none on a space) */
} Avail;

static void avail_of(const Ctx *c, const KState *s, const uint8_t *tal, int nt, Avail *av)
{
    av->others = 0;
    av->piles = 0;
    for (int q = 0; q < nt; q++)
        av->others |= 1ULL << s->talon[tal[q]];
    for (int t = 0; t < c->npiles; t++) {
        uint64_t m = 0;
        int lo = s->down[t], hi = c->partial ? s->n[t] : (s->n[t] > lo ? lo + 1 : lo);
        for (int j = lo; j < hi; j++)
            m |= 1ULL << s->card[t][j];
        av->pile[t] = m;
        av->piles |= m;
        av->onto[t] = s->n[t] > 0 ? BUILDERS[s->card[t][s->n[t] - 1]] : 0;
    }
    if (c->fret)
        for (int su = 0; su < 4; su++)
            if (s->found[su])
                av->others |= 1ULL << (su * 13 + s->found[su] - 1);
}

/* Whether some card other than pile ``skip``'s could be built on card x right now: a talon
 * card in reach, a face-up card that heads a movable run, or a foundation top brought back. */
static inline int can_receive(const Avail *av, int x, int skip)
{
    uint64_t free_cards = av->others | (skip >= 0 ? av->piles & ~av->pile[skip] : av->piles);
    return (BUILDERS[x] & free_cards) != 0;
}

/* Whether a King could go into a space right now (a run headed by a King over face-down
 * cards, a King in reach in the talon, or with foundation_return a King on a foundation). */
static int king_waiting(const Ctx *c, const KState *s, const uint8_t *tal, int nt)
{
    for (int i = 0; i < c->npiles; i++)
        if (s->down[i] > 0 && s->n[i] > s->down[i] && rank_of(s->card[i][s->down[i]]) == 13)
            return 1;
    for (int q = 0; q < nt; q++)
        if (rank_of(s->talon[tal[q]]) == 13)
            return 1;
    if (c->fret)
        for (int su = 0; su < 4; su++)
            if (s->found[su] == 13)
                return 1;
    return 0;
}

/* Run moves from pile i starting at position j onto every pile that takes them. A move that
 * turns no card is tried only when what it uncovers is of use at once (docs/solver.md: such a
 * move can always wait until then): a space with a King waiting, or a card that goes to its
 * foundation or takes another card. */
static void run_moves(const Ctx *c, const KState *s, int i, int j, KMove *m, int *k, const uint8_t *tal, int nt,
                      const Avail *av)
{
    int x = s->card[i][j], count = s->n[i] - j;
    if (rank_of(x) == 13) {
        int e = first_empty(c, s);
        if (e >= 0 && j == s->down[i] && s->down[i] > 0)
            add(m, k, M_RUN, i, e, count, 0, 0);
        return;
    }
    if (j == 0) {
        if (!king_waiting(c, s, tal, nt))
            return;
    } else if (j > s->down[i]) {
        int under = s->card[i][j - 1];
        if (!on_found(s, under) && (c->cut || !can_receive(av, under, i)))
            return;
    }
    /* with equivalent runs, a run that only moves from a twin onto the other stays in the same
     * position (but at a root barred from a REDEAL until a move is made) */
    int same = c->twins && j > s->down[i] && (c->depth > 0 || c->root_redeal) ? twin_of(s->card[i][j - 1]) : -1;
    for (int t = 0; t < c->npiles; t++)
        if (t != i && (av->onto[t] >> x & 1) && s->card[t][s->n[t] - 1] != same)
            add(m, k, M_RUN, i, t, count, 0, 0);
}

/* With equivalent runs: the next card of suit su, face up on the tableau, goes home as a top or,
 * covered by a run while its twin is a top, after that run moves onto the twin (M_TWIN_HOME: in
 * the position with the runs swapped it is a top; docs/solver.md, *Equivalent runs*). Adds the
 * move (covered only, unless tops too) when there is one and ``safe_only`` allows it. */
static int twin_home(const Ctx *c, const KState *s, int su, const int8_t *where, const uint8_t *at, int tops,
                     int safe_only, KMove *m, int *k)
{
    if (s->found[su] >= 13)
        return 0;
    int x = su * 13 + s->found[su], i = where[x], t = where[twin_of(x)];
    if (i < 0 || (safe_only && !safe(c, s, x)))
        return 0;
    if (at[x] == s->n[i] - 1) {
        if (!tops)
            return 0;
        add(m, k, M_TAB_FOUND, i, 0, 1, 0, 0);
        return 1;
    }
    if (t < 0 || at[twin_of(x)] != s->n[t] - 1)
        return 0;
    add(m, k, M_TWIN_HOME, i, t, s->n[i] - 1 - at[x], 0, 0);
    return 1;
}

/* Every move worth trying, best first; a safe move to the foundations alone when there is one
 * (with equivalent runs the first such card by suit, so that the choice does not depend on which
 * twin a run hangs on). */
static int gen_moves(const Ctx *c, const KState *s, KMove *m)
{
    int k = 0;
    int8_t where[52]; /* with equivalent runs: the pile of each face-up card (-1: none), at[] its place */
    uint8_t at[52];
    if (c->twins) {
        memset(where, -1, sizeof where);
        for (int i = 0; i < c->npiles; i++)
            for (int j = s->down[i]; j < s->n[i]; j++) {
                where[s->card[i][j]] = (int8_t)i;
                at[s->card[i][j]] = (uint8_t)j;
            }
        for (int su = 0; su < 4; su++)
            if (twin_home(c, s, su, where, at, 1, 1, m, &k))
                return k;
    } else {
        for (int i = 0; i < c->npiles; i++) {
            if (s->n[i] > s->down[i]) {
                int x = s->card[i][s->n[i] - 1];
                if (on_found(s, x) && safe(c, s, x)) {
                    add(m, &k, M_TAB_FOUND, i, 0, 1, 0, 0);
                    return k;
                }
            }
        }
    }
    if (c->draw == 1 && s->cur > 0) {
        int x = s->talon[s->cur - 1];
        if (on_found(s, x) && safe(c, s, x)) {
            add(m, &k, M_TAL_FOUND, 0, 0, 1, s->cur - 1, 0);
            return k;
        }
    }
    /* 1. tableau tops to the foundations */
    for (int i = 0; i < c->npiles; i++)
        if (s->n[i] > s->down[i] && on_found(s, s->card[i][s->n[i] - 1]))
            add(m, &k, M_TAB_FOUND, i, 0, 1, 0, 0);
    if (c->twins)
        for (int su = 0; su < 4; su++)
            twin_home(c, s, su, where, at, 0, 0, m, &k);
    uint8_t idx[2 * MAXTALON], wrap[2 * MAXTALON];
    int nt = talon_reach(c, s, idx, wrap);
    Avail av;
    avail_of(c, s, idx, nt, &av);
    /* 2. whole runs that turn a face-down card, the pile with most face down first */
    int most_down = 0;
    for (int i = 0; i < c->npiles; i++)
        if (s->n[i] > s->down[i] && s->down[i] > most_down)
            most_down = s->down[i];
    for (int dn = most_down; dn >= 1; dn--)
        for (int i = 0; i < c->npiles; i++)
            if (s->down[i] == dn && s->n[i] > dn)
                run_moves(c, s, i, dn, m, &k, idx, nt, &av);
    /* 3. talon cards to the foundations, then onto the piles */
    for (int q = 0; q < nt; q++)
        if (on_found(s, s->talon[idx[q]]))
            add(m, &k, M_TAL_FOUND, 0, 0, 1, idx[q], wrap[q]);
    for (int q = 0; q < nt; q++) {
        int x = s->talon[idx[q]];
        if (rank_of(x) == 13) {
            int e = first_empty(c, s);
            if (e >= 0)
                add(m, &k, M_TAL_TAB, 0, e, 1, idx[q], wrap[q]);
            continue;
        }
        /* turning one with passes unlimited every talon card stays in reach, so a card goes
         * onto a pile only when another card can go onto it at once (docs/solver.md) */
        if ((c->cut || !c->keep_cur) && !can_receive(&av, x, -1))
            continue;
        for (int t = 0; t < c->npiles; t++)
            if (av.onto[t] >> x & 1)
                add(m, &k, M_TAL_TAB, 0, t, 1, idx[q], wrap[q]);
    }
    /* 4. whole piles with nothing face down onto other piles (they leave a space) */
    for (int i = 0; i < c->npiles; i++)
        if (s->down[i] == 0 && s->n[i] > 0)
            run_moves(c, s, i, 0, m, &k, idx, nt, &av);
    /* 5. part of a run */
    if (c->partial)
        for (int i = 0; i < c->npiles; i++)
            for (int j = s->n[i] - 1; j > s->down[i]; j--)
                run_moves(c, s, i, j, m, &k, idx, nt, &av);
    /* 6. back from the foundations */
    if (c->fret && !c->cut) {
        for (int su = 0; su < 4; su++) {
            int r = s->found[su];
            if (r == 0 || !worth_returning(s, r, su))
                continue;
            int x = su * 13 + r - 1;
            if (!can_receive(&av, x, -1))
                continue;
            if (r == 13) {
                int e = first_empty(c, s);
                if (e >= 0)
                    add(m, &k, M_FOUND_TAB, su, e, 1, 0, 0);
                continue;
            }
            for (int t = 0; t < c->npiles; t++)
                if (av.onto[t] >> x & 1)
                    add(m, &k, M_FOUND_TAB, su, t, 1, 0, 0);
        }
    }
    return k;
}

static inline void turn_up(KState *s, int i)
{
    if (s->n[i] > 0 && s->down[i] >= s->n[i])
        s->down[i] = (uint8_t)(s->n[i] - 1);
}

static int take_talon(KState *s, const KMove *mv)
{
    int x = s->talon[mv->tidx];
    s->talon_set &= ~(1ULL << x);
    s->talon_key[0] ^= ZT[x][0];
    s->talon_key[1] ^= ZT[x][1];
    memmove(s->talon + mv->tidx, s->talon + mv->tidx + 1, (size_t)(s->tlen - mv->tidx - 1));
    s->tlen--;
    s->cur = mv->tidx;
    if (mv->wrap && s->redeals > 0)
        s->redeals--;
    return x;
}

static void apply(KState *s, const KMove *mv)
{
    int x;
    switch (mv->kind) { /* every move changes src's pile, dst's, or both: their keys are stale */
    case M_TAB_FOUND:
        s->stale_piles |= (uint16_t)(1u << mv->src);
        x = s->card[mv->src][--s->n[mv->src]];
        s->found[suit_of(x)]++;
        turn_up(s, mv->src);
        break;
    case M_TAL_FOUND:
        x = take_talon(s, mv);
        s->found[suit_of(x)]++;
        break;
    case M_TAL_TAB:
        x = take_talon(s, mv);
        s->stale_piles |= (uint16_t)(1u << mv->dst);
        s->card[mv->dst][s->n[mv->dst]++] = (uint8_t)x;
        break;
    case M_RUN:
        s->stale_piles |= (uint16_t)(1u << mv->src | 1u << mv->dst);
        memcpy(&s->card[mv->dst][s->n[mv->dst]], &s->card[mv->src][s->n[mv->src] - mv->count], mv->count);
        s->n[mv->dst] = (uint8_t)(s->n[mv->dst] + mv->count);
        s->n[mv->src] = (uint8_t)(s->n[mv->src] - mv->count);
        turn_up(s, mv->src);
        break;
    case M_FOUND_TAB:
        x = mv->src * 13 + s->found[mv->src] - 1;
        s->found[mv->src]--;
        s->stale_piles |= (uint16_t)(1u << mv->dst);
        s->card[mv->dst][s->n[mv->dst]++] = (uint8_t)x;
        break;
    case M_TWIN_HOME: {
        KMove run = {M_RUN, mv->src, mv->dst, mv->count, 0, 0}, home = {M_TAB_FOUND, mv->src, 0, 1, 0, 0};
        apply(s, &run);
        apply(s, &home);
        break;
    }
    }
}

/* A proof of loss before any search: a card that can never leave its pile. A card leaves its
 * pile only for a host (a card of the opposite colour one rank higher), its foundation (after
 * every lower card of its suit) or, a King, a space. Over-approximate what can ever be in play
 * ("available"): every card of the talon, the foundations and the face-up tableau, and a
 * face-down card once every card above it can leave. The lowest face-up card of a pile and
 * then each face-down card beneath it, in turn, can leave if it is a King, if one of its two
 * hosts is available, or if every lower card of its suit is. Grow the set to its fixpoint: a
 * card buried under a card that can never leave (its hosts and a lower card of its suit under
 * it, say) is never available, so the deal is lost. Every real line only exposes cards this
 * set holds (a card leaves as the head of its run, onto a host exposed earlier, and so on), so
 * the set is a superset of what play can reach and the verdict a proof. Moves never shrink the
 * set (cards stay face up, turning a card only adds one), so checking the root suffices. */
static int never_free(const Ctx *c, const KState *s)
{
    uint64_t avail = 0;
    int exposed[MAXP];
    for (int q = 0; q < s->tlen; q++)
        avail |= 1ULL << s->talon[q];
    for (int su = 0; su < 4; su++)
        for (int r = 0; r < s->found[su]; r++)
            avail |= 1ULL << (su * 13 + r);
    for (int i = 0; i < c->npiles; i++) {
        for (int j = s->down[i]; j < s->n[i]; j++)
            avail |= 1ULL << s->card[i][j];
        exposed[i] = s->n[i] > s->down[i] ? s->down[i] + 1 : 0; /* the pile's blocker: exposed - 1 */
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < c->npiles; i++) {
            while (exposed[i] > 0) {
                int y = s->card[i][exposed[i] - 1];
                uint64_t lower = ((1ULL << (rank_of(y) - 1)) - 1) << (suit_of(y) * 13);
                if (!(rank_of(y) == 13 || (BUILDERS_OF_HOSTS[y] & avail) || (lower & avail) == lower))
                    break;
                if (--exposed[i] > 0)
                    avail |= 1ULL << s->card[i][exposed[i] - 1];
                changed = 1;
            }
        }
    }
    return avail != (1ULL << 52) - 1;
}

/* A dead end (docs/solver.md, "Klondike", *A dead end*): some card not on its foundation can
 * never leave its place, so the position is lost. A card's *place* is what it lies on (the card
 * beneath it, the bottom of a pile, the talon); it *departs* when it leaves it: onto a host
 * (opposite colour, one rank higher), to its foundation, or, a King not at a pile's bottom, into
 * a space (a bottom King moving to another space changes nothing but the piles' order). A card
 * carried in a run has not departed. Over-approximate the cards that ever depart, as the least
 * fixpoint of necessary conditions on a card's first departure, each an event before it:
 *   - a face-down card must be uncovered first: the card on it has departed;
 *   - to its foundation: every lower card of its suit not home has departed (it went home), and
 *     the card on it has departed (a card goes up alone);
 *   - onto a host h: h is a pile's top then. h in a pile: h is its top now, or the card on it has
 *     departed (whatever moves h carries that card along); h in the talon: h has departed; h on its
 *     foundation: it has come back (foundation_return only), which it does only as its
 *     foundation's top (every higher card of its suit home now came back first) onto a host that
 *     is a top then (by these same rules), or a King into a space;
 *   - a King into a space: some pile is empty now, or the bottom card of some pile has departed.
 * Induction on a line of play (order its cards' first departures and returns in time): every card that
 * departs meets its conditions through earlier departures, so it is in the fixpoint. A card
 * outside it never departs, so never goes home: the position is lost, and so is every position
 * reachable from it. The talon is treated as if every card in it could be reached (with passes
 * unlimited they can; otherwise the set only grows, still a superset). Returns whether some card
 * not home is outside the fixpoint. */
/* One suit's ranks in a card set (bit r-1 for rank r). */
#define SUIT_BITS ((1ULL << 13) - 1)

/* The cards that have a host in `hosts` (a host: opposite colour, one rank higher), as a set:
 * each suit's ranks shifted one down from the two suits of the other colour. */
static inline uint64_t builders_of(uint64_t hosts)
{
    uint64_t black = (hosts | hosts >> 39) & SUIT_BITS;              /* spades | clubs */
    uint64_t redh = ((hosts >> 13) | (hosts >> 26)) & SUIT_BITS;     /* hearts | diamonds */
    uint64_t on_red = redh >> 1, on_black = black >> 1;              /* one rank lower */
    return on_red | on_red << 39 | on_black << 13 | on_black << 26;
}

/* The same fixpoint as described above, computed a set at a time: a round adds every card whose
 * condition holds given the departures (and returns) of the rounds before. The conditions only
 * grow with the sets, so the least fixpoint, and the verdict, are those of any order. Sets:
 *   free: the cards that can be a pile's top at some time (a pile card uncovered now or once the
 *         card on it departs, a talon card that has departed, a home card that has come back);
 *   uncov: the pile cards uncovered now or once the card on them departs. */
static int stuck(const Ctx *c, const KState *s)
{
    uint64_t home = 0, bottoms = 0, down = 0, uncov = 0;
    uint8_t below[52]; /* the card under a pile card (0xFF: the pile's bottom) */
    int space = 0;
    for (int su = 0; su < 4; su++)
        home |= ((1ULL << s->found[su]) - 1) << (su * 13);
    uint64_t talon = s->talon_set;
    for (int i = 0; i < c->npiles; i++) {
        int n = s->n[i];
        if (n == 0) {
            space = 1;
            continue;
        }
        const uint8_t *p = s->card[i];
        bottoms |= 1ULL << p[0];
        uncov |= 1ULL << p[n - 1];
        below[p[0]] = 0xFF;
        for (int j = 1; j < n; j++)
            below[p[j]] = p[j - 1];
        for (int j = 0; j < s->down[i]; j++)
            down |= 1ULL << p[j];
    }
    const uint64_t kings = 1ULL << 12 | 1ULL << 25 | 1ULL << 38 | 1ULL << 51;
    uint64_t out = ((1ULL << 52) - 1) & ~home, departs = 0, returns = 0; /* returns: home cards */
    for (;;) {
        uint64_t free_ = (home & returns) | (talon & departs) | uncov;
        uint64_t hosted = builders_of(free_);
        int king_space = space || (bottoms & departs) != 0;
        int changed = 0;
        /* with foundation_return, a home card comes back only as its foundation's top (every
         * higher card of its suit home now came back first), onto a host that is a top then, or a
         * King into a space */
        if (c->fret)
            for (int su = 0; su < 4; su++) {
                uint64_t h = home >> (su * 13) & SUIT_BITS, back = returns >> (su * 13) & SUIT_BITS;
                if (h == back)
                    continue;
                int r = 64 - __builtin_clzll(h & ~back); /* the highest home card not back yet */
                if (back != (h & ~((1ULL << r) - 1)))
                    continue; /* not reached while a higher card is still home */
                uint64_t x = 1ULL << (su * 13 + r - 1);
                if (r == 13 ? king_space : (hosted & x) != 0) {
                    returns |= x;
                    changed = 1;
                }
            }
        /* a face-down card stays covered until the card on it departs */
        uint64_t todo = out & ~departs & ~(down & ~uncov);
        uint64_t gone = home | departs, lower_ok = 0; /* lower_ok: every lower card of its suit gone */
        for (int su = 0; su < 4; su++) {
            uint64_t g = gone >> (su * 13) & SUIT_BITS;
            int k = __builtin_ctzll(~g); /* ranks 1..k gone: rank k+1 may go home */
            lower_ok |= (((2ULL << k) - 1) & SUIT_BITS) << (su * 13);
        }
        uint64_t now = todo & ((lower_ok & (talon | uncov)) | hosted | (king_space ? kings & ~bottoms : 0));
        if (now) {
            departs |= now;
            if ((out & ~departs) == 0)
                return 0; /* every card departs: what comes back changes nothing */
            changed = 1;
            for (uint64_t t = now & ~talon; t; t &= t - 1) {
                int b = below[__builtin_ctzll(t)];
                if (b != 0xFF)
                    uncov |= 1ULL << b;
            }
        }
        if (!changed)
            break;
    }
    return (out & ~departs) != 0;
}

static int is_won(const Ctx *c, const KState *s)
{
    if (s->tlen)
        return 0;
    for (int i = 0; i < c->npiles; i++)
        if (s->down[i])
            return 0;
    return 1; /* every card face up in descending runs: the lowest top always goes up next */
}

/* How far play got in a position: cards on the foundations plus cards turned up since the
 * root. The sampled Hint scores a world its search left undecided by the best of these (as
 * Bjarnason et al.'s and lonelybot's rollouts do); the search itself never reads it. */
static int progress_of(const Ctx *c, const KState *s)
{
    int p = s->found[0] + s->found[1] + s->found[2] + s->found[3] + c->root_down;
    for (int i = 0; i < c->npiles; i++)
        p -= s->down[i];
    return p;
}

/* One more position (of a pass or a beam): R_STOP past the node limit, the clock, the quick
 * passes' half of the clock or the stop flag, else 0; keeps the most progress seen. */
static int count_node(Ctx *c, const KState *s)
{
    c->nodes++;
    if (c->max_nodes && c->nodes > c->max_nodes)
        return R_STOP; /* a node limit: the caller's, or the quick pass's */
    if ((c->nodes & 1023) == 0) {
        double now = c->deadline > 0 ? now_seconds() : 0;
        if ((c->stop != NULL && *c->stop) || (c->deadline > 0 && now > c->deadline)) {
            c->stopped = 1;
            return R_STOP;
        }
        if (c->quick && c->quick_deadline > 0 && now > c->quick_deadline) {
            c->quick_over = 1; /* not stopped: the full search has the other half */
            return R_STOP;
        }
    }
    int p = progress_of(c, s);
    if (p > c->best)
        c->best = p;
    return 0;
}

static int dfs(Ctx *c, KState *s)
{
    if (count_node(c, s))
        return R_STOP;
    if (is_won(c, s))
        return R_WIN;
    uint64_t h[2], a, b;
    key_base(c, s, h);
    key_at(c, h, canonical_cur(c, s), &a, &b);
    if (ks_has_or_add(&c->seen, a, b))
        return R_DEAD;
    /* the full search only (the quick passes keep their moves, and their node counts); with a
     * REDEAL allowed, as R(0) needs it */
    if (!c->quick && c->dominance && c->keep_cur && s->redeals < 0 && (c->depth > 0 || c->root_redeal) &&
        dominated(c, s, h))
        return R_DEAD;
    if (c->dead_ends && stuck(c, s))
        return R_DEAD; /* lost: see stuck (every pass: it only drops lost positions) */
    if (c->depth >= MAXDEPTH) {
        c->truncated = 1;
        return R_DEAD;
    }
    KMove moves[MAXMOVES];
    int nm = gen_moves(c, s, moves);
    if (nm >= MAXMOVES)
        c->truncated = 1; /* see MAXMOVES: a move may have been dropped */
    if (c->noisy)
        shake_first_move(&c->rng, moves, nm, sizeof moves[0]);
    for (int q = 0; q < nm; q++) {
        KState child = *s;
        apply(&child, &moves[q]);
        c->path[c->depth++] = moves[q];
        int r = dfs(c, &child);
        if (r != R_DEAD)
            return r;
        c->depth--;
    }
    return R_DEAD;
}

/* ---- the beam passes (docs/solver.md, "Klondike", *Beams*) ---- */

/* A beam's worth of a position (only the order of worths matters): cards home, face-down cards
 * (each a card the search cannot use yet), talon cards left (a win empties the talon; without
 * this term, or at 5, the beams won fewer of the deals left unknown), spaces. */
#define W_HOME 10
#define W_DOWN 25
#define W_TALON 15
#define W_SPACE 5

static int worth(const Ctx *c, const KState *s)
{
    int v = W_HOME * (s->found[0] + s->found[1] + s->found[2] + s->found[3]) - W_TALON * s->tlen;
    for (int i = 0; i < c->npiles; i++)
        v += s->n[i] == 0 ? W_SPACE : -W_DOWN * s->down[i];
    return v;
}

static void key_of(const Ctx *c, KState *s, uint64_t *a, uint64_t *b)
{
    uint64_t h[2];
    key_base(c, s, h);
    key_at(c, h, canonical_cur(c, s), a, b);
}

/* What a beam asks of Klondike (_ccommon.h's BeamGame). c->depth is the depth of the positions
 * whose moves are made (the root alone may be barred from a REDEAL), then of the children keyed. */
static int beam_moves(void *game, const void *s, int depth, void *out)
{
    Ctx *c = (Ctx *)game;
    c->depth = depth;
    return gen_moves(c, (const KState *)s, (KMove *)out);
}

static void beam_apply(void *game, void *s, const void *mv)
{
    (void)game;
    apply((KState *)s, (const KMove *)mv);
}

static int beam_made(void *game, const void *s) { return count_node((Ctx *)game, (const KState *)s); }

static int beam_won(void *game, const void *s) { return is_won((const Ctx *)game, (const KState *)s); }

static int beam_worth(void *game, const void *s) { return worth((const Ctx *)game, (const KState *)s); }

/* Not seen before (then recorded), and not a dead end (lost: see stuck). */
static int beam_keep(void *game, const void *s, int depth)
{
    Ctx *c = (Ctx *)game;
    uint64_t a, b;
    c->depth = depth;
    key_of(c, (KState *)s, &a, &b); /* a position of the beam's layer, which key_base may update */
    if (ks_has(&c->seen, a, b))
        return 0;
    ks_add(&c->seen, a, b);
    return !(c->dead_ends && stuck(c, (const KState *)s));
}

static const BeamGame KLONDIKE_BEAM = {sizeof(KState), sizeof(KMove), MAXMOVES, beam_moves, beam_apply,
                                       beam_made,     beam_won,       beam_worth, beam_keep};

/* One beam of `width` from the root over the passes' moves (c->cut chooses which): each layer
 * is every move from every position of the one before, and the `width` best children not seen
 * before and not dead ends are kept (by worth, then the order they were made in). R_WIN with
 * the line in c->path/c->depth, R_DEAD when a layer is empty or MAXDEPTH is reached, R_STOP on
 * a budget or the stop flag, -1 out of memory. A position counts as a node when it is made, as
 * in the twin. */
static int beam(Ctx *c, KState *root, int width)
{
    uint64_t a, b;
    c->depth = 0;
    key_of(c, root, &a, &b);
    ks_add(&c->seen, a, b);
    return beam_pass(&KLONDIKE_BEAM, c, root, width, MAXDEPTH, c->path, &c->depth);
}

/* ---- what the pass scheduler (_cschedule.h) asks of Klondike ---- */

/* One quick pass from the root: noisy, with the cuts or the full search's moves. */
static int sched_quick_pass(void *core, int noisy, int cut, uint64_t rng)
{
    Ctx *c = (Ctx *)core;
    c->noisy = noisy;
    c->cut = cut;
    c->rng = rng;
    c->depth = 0;
    return dfs(c, c->root);
}

/* One beam from the root with the full search's moves (with the quick passes' cuts the beams
 * died out, every child seen or a dead end, and won fewer deals). */
static int sched_beam(void *core, int width, int cut)
{
    Ctx *c = (Ctx *)core;
    c->noisy = 0;
    c->cut = cut;
    return beam(c, c->root, width);
}

static int sched_full(void *core)
{
    Ctx *c = (Ctx *)core;
    c->noisy = 0;
    c->cut = 0;
    c->quick = 0;
    c->depth = 0;
    c->truncated = 0;
    return dfs(c, c->root);
}

static int sched_reset(void *core) { return ks_reset(&((Ctx *)core)->seen); }

/* ---- the win as primitive moves: (src_zone, src, dst_zone, dst, count) ---- */

static int draws(int from, int to, int d) { return (to - from + d - 1) / d; }

static int expand(const Ctx *c, KState s, PyObject *out)
{
    for (int q = 0; q < c->depth; q++) {
        const KMove *mv = &c->path[q];
        if (mv->kind == M_TAL_FOUND || mv->kind == M_TAL_TAB) {
            int from = s.cur;
            if (mv->wrap) {
                for (int k = draws(s.cur, s.tlen, c->draw); k > 0; k--)
                    if (!push_move(out, Z_STOCK, 0, Z_WASTE, 0, 0))
                        return 0;
                if (!push_move(out, Z_WASTE, 0, Z_STOCK, 0, 0))
                    return 0;
                from = 0;
            }
            for (int k = draws(from, mv->tidx + 1, c->draw); k > 0; k--)
                if (!push_move(out, Z_STOCK, 0, Z_WASTE, 0, 0))
                    return 0;
            int x = s.talon[mv->tidx];
            if (!push_move(out, Z_WASTE, 0, mv->kind == M_TAL_FOUND ? Z_FOUND : Z_TAB,
                      mv->kind == M_TAL_FOUND ? suit_of(x) : mv->dst, 1))
                return 0;
        } else if (mv->kind == M_TAB_FOUND) {
            if (!push_move(out, Z_TAB, mv->src, Z_FOUND, suit_of(s.card[mv->src][s.n[mv->src] - 1]), 1))
                return 0;
        } else if (mv->kind == M_RUN) {
            if (!push_move(out, Z_TAB, mv->src, Z_TAB, mv->dst, mv->count))
                return 0;
        } else if (mv->kind == M_TWIN_HOME) {
            if (!push_move(out, Z_TAB, mv->src, Z_TAB, mv->dst, mv->count) ||
                !push_move(out, Z_TAB, mv->src, Z_FOUND, suit_of(s.card[mv->src][s.n[mv->src] - mv->count - 1]), 1))
                return 0;
        } else if (!push_move(out, Z_FOUND, mv->src, Z_TAB, mv->dst, 1)) {
            return 0;
        }
        apply(&s, mv);
    }
    for (;;) { /* play out: the lowest top goes up */
        int best = -1;
        for (int i = 0; i < c->npiles; i++)
            if (s.n[i] && (best < 0 || rank_of(s.card[i][s.n[i] - 1]) < rank_of(s.card[best][s.n[best] - 1])))
                best = i;
        if (best < 0)
            return 1;
        KMove mv = {M_TAB_FOUND, (uint8_t)best, 0, 1, 0, 0};
        if (!push_move(out, Z_TAB, best, Z_FOUND, suit_of(s.card[best][s.n[best] - 1]), 1))
            return 0;
        apply(&s, &mv);
    }
}

/* ---- Python entry ---- */

static int read_position(PyObject *piles, PyObject *downs, PyObject *found, PyObject *talon, int cur,
                         Ctx *c, KState *s)
{
    memset(s, 0, sizeof *s);
    if (!PyList_Check(piles) || !PyList_Check(downs) || !PyList_Check(found) || !PyBytes_Check(talon)) {
        PyErr_SetString(PyExc_TypeError, "piles: list of bytes, downs: list of int, found: list of 4 int, talon: bytes");
        return 0;
    }
    Py_ssize_t np = PyList_GET_SIZE(piles);
    if (np < 1 || np > MAXP || PyList_GET_SIZE(downs) != np || PyList_GET_SIZE(found) != 4) {
        PyErr_SetString(PyExc_ValueError, "1..10 piles, one face-down count a pile, 4 foundations");
        return 0;
    }
    c->npiles = (int)np;
    for (Py_ssize_t i = 0; i < np; i++) {
        if (!read_pile(PyList_GET_ITEM(piles, i), PyList_GET_ITEM(downs, i), MAXPILE, s->card[i], &s->n[i],
                       &s->down[i]) ||
            !cards_valid(s->card[i], s->n[i])) /* before turn_up and the key read tables by card */
            return 0;
        turn_up(s, (int)i);
    }
    if (!read_foundations(found, 4, s->found))
        return 0;
    if (PyBytes_GET_SIZE(talon) > MAXTALON || cur < 0 || cur > PyBytes_GET_SIZE(talon)) {
        PyErr_SetString(PyExc_ValueError, "the talon holds at most 52 cards and cur is within it");
        return 0;
    }
    s->tlen = (uint8_t)PyBytes_GET_SIZE(talon);
    memcpy(s->talon, PyBytes_AS_STRING(talon), s->tlen);
    if (!cards_valid(s->talon, s->tlen))
        return 0;
    s->stale_piles = (uint16_t)((1u << MAXP) - 1);
    for (int j = 0; j < s->tlen; j++) {
        s->talon_set |= 1ULL << s->talon[j];
        s->talon_key[0] ^= ZT[s->talon[j]][0];
        s->talon_key[1] ^= ZT[s->talon[j]][1];
    }
    s->cur = (uint8_t)cur;
    return 1;
}

/* Whether every face-up card but a pile's lowest lies on a host (one rank higher, the other
 * colour), as every position reached by play has it. */
static int face_up_runs(const Ctx *c, const KState *s)
{
    for (int i = 0; i < c->npiles; i++)
        for (int j = s->down[i] + 1; j < s->n[i]; j++)
            if (!builds_on(s->card[i][j], s->card[i][j - 1]))
                return 0;
    return 1;
}

/* The most slots the table of positions may grow to (it starts small and doubles as it fills,
 * at most half full). A key that does not fit is dropped, and a search whose positions no longer
 * fit revisits them (a cycle of dropped positions runs to MAXDEPTH: UNKNOWN at any budget), so
 * the limit follows the budget: two slots a position a node budget allows (the table never holds
 * more positions than the search counts), or TABLE_RATE positions a second of a time budget, at
 * least `least` (MAX_SLOTS unless a test asks for less, a power of two); with no budget,
 * MAX_SLOTS_ANY. Memory is spent only as the table fills: 16 bytes a slot, so at most 64 bytes a
 * position stored. */
static size_t table_limit(size_t least, unsigned long long max_nodes, double max_seconds)
{
    double want = 0;
    if (max_nodes)
        want = 2.0 * (double)max_nodes;
    else if (max_seconds > 0)
        want = 2.0 * TABLE_RATE * max_seconds;
    size_t cap = least;
    size_t top = max_seconds > 0 ? MAX_SLOTS_TIMED : MAX_SLOTS_ANY; /* a clock: a service's search */
    while (cap < top && (want == 0 || (double)cap < want))
        cap <<= 1;
    return cap;
}

static PyObject *py_klondike_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"piles", "downs", "found", "talon", "cur", "draw", "redeals", "partial_runs",
                             "foundation_return", "root_redeal", "max_nodes", "max_seconds", "stop",
                             "quick_nodes", "quick_total", "progress", "full_moves_every", "restart_nodes",
                             "dominance", "dead_ends", "beam_first", "beam_last", "equivalent_runs", "safe_two",
                             "loose_safe", "min_table_slots", NULL};
    PyObject *piles, *downs, *found, *talon, *stop_obj = NULL, *progress_obj = NULL;
    int cur, draw, redeals, partial, fret, root_redeal, dominance = 1, dead_ends = 1, equivalent_runs = 1;
    int safe_two = 1, loose_safe = 0;
    unsigned long long min_table_slots = 0;
    unsigned long long max_nodes = 0, quick_nodes = QUICK_NODES, quick_total = QUICK_TOTAL;
    double max_seconds = 0;
    int full_moves_every = FULL_MOVES_EVERY, beam_first = -1, beam_last = BEAM_LAST_WIDTH;
    unsigned long long restart_nodes = RESTART_NODES;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOiiippp|KdOKKOiKppiipppK", kwlist, &piles, &downs, &found, &talon, &cur,
                                     &draw, &redeals, &partial, &fret, &root_redeal, &max_nodes, &max_seconds,
                                     &stop_obj, &quick_nodes, &quick_total, &progress_obj, &full_moves_every,
                                     &restart_nodes, &dominance, &dead_ends, &beam_first, &beam_last,
                                     &equivalent_runs, &safe_two, &loose_safe, &min_table_slots))
        return NULL;
    if (beam_first < 0) /* by the rules: turning one, the beams cost the restarts more wins than they made */
        beam_first = draw > 1 ? BEAM_FIRST_WIDTH : 0;
    if (draw < 1 || draw > 52 || redeals < -1 || redeals > 14) {
        PyErr_SetString(PyExc_ValueError, "draw is 1..52; redeals -1 (unlimited) or 0..14");
        return NULL;
    }
    Ctx *c = (Ctx *)calloc(1, sizeof(Ctx));
    if (c == NULL)
        return PyErr_NoMemory();
    KState root;
    if (!read_position(piles, downs, found, talon, cur, c, &root)) {
        free(c);
        return NULL;
    }
    root.redeals = (int8_t)redeals;
    c->draw = draw;
    c->partial = partial;
    c->fret = fret;
    c->dominance = dominance;
    c->dead_ends = dead_ends;
    c->safe_two = safe_two;
    c->loose_safe = loose_safe;
    /* the proof needs a run to move off a twin onto the other, and every face-up card but a pile's
     * lowest on a host (as play keeps it; a position made up with other face-up cards is not) */
    c->twins = equivalent_runs && partial && face_up_runs(c, &root);
    c->root_redeal = root_redeal;
    c->keep_cur = !(draw == 1 && redeals < 0);
    c->max_nodes = max_nodes;
    for (int i = 0; i < c->npiles; i++)
        c->root_down += root.down[i];
    Py_buffer stop_view, progress_view;
    size_t max_slots = table_limit(min_table_slots ? (size_t)min_table_slots : MAX_SLOTS, max_nodes, max_seconds);
    if (!open_search_progress(&c->seen, max_slots < ((size_t)1 << 14) ? max_slots : (size_t)1 << 14, max_slots, 0,
                              stop_obj, &stop_view, &c->stop, progress_obj, &progress_view)) {
        free(c);
        return NULL;
    }
    int r = R_DEAD, ok = 1;
    /* First quick passes with cuts that may lose wins (talon cards onto piles only when a card
     * can follow at once, parts of runs only to send the card beneath up, no returns): most
     * won deals are won in the first. The restarts shake the move order, quick_nodes positions
     * the first pass, restart_nodes (at most quick_nodes) each restart, until quick_total
     * (QUICK_NODES, RESTART_NODES and QUICK_TOTAL unless a test asks for less; no restart with
     * passes limited, and never more than half a node budget or half a time budget: the full
     * search wins some deals at once and alone proves losses). Every full_moves_every-th restart
     * drops the cuts and takes the full search's moves, still shaken: the cuts lose some wins
     * whatever the order (seed 47 turning three: the full search wins in 2,000 positions what no
     * cut pass finds). After each pass that reached its size, one beam, widths beam_first, twice
     * that, ... beam_last, in the same share of the budget: they win deals whose wins the
     * depth-first passes reach late or never, and the narrow ones first cost the restarts
     * little. Then, from scratch, the full search, whose LOST is a proof (_cschedule.h). Before
     * all that, never_free or stuck may prove the loss outright. */
    Schedule plan = {quick_nodes,
                     restart_nodes < quick_nodes ? restart_nodes : quick_nodes,
                     redeals >= 0 ? 0 : quick_total, /* passes limited: the cut that waits for a card to follow costs wins */
                     full_moves_every,
                     1,
                     2,
                     beam_first,
                     beam_last,
                     0};
    ScheduleCore core = {c,          &c->nodes,  &c->max_nodes, &c->stopped, &c->quick_over, sched_quick_pass,
                         sched_beam, sched_full, sched_reset};
    c->root = &root;
    Py_BEGIN_ALLOW_THREADS
    c->deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    c->quick_deadline = schedule_quick_deadline(&plan, c->deadline, max_seconds);
    c->quick = 1;
    int lost_at_root = never_free(c, &root) || (dead_ends && stuck(c, &root)); /* then no search: LOST, 0 positions */
    if (!lost_at_root)
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
    {"klondike_solve", (PyCFunction)(void (*)(void))py_klondike_solve, METH_VARARGS | METH_KEYWORDS,
     "klondike_solve(piles, downs, found, talon, cur, draw, redeals, partial_runs, foundation_return, "
     "root_redeal, max_nodes=0, max_seconds=0, stop=None, quick_nodes=100000, quick_total=2000000, progress=None, full_moves_every=2, restart_nodes=30000, "
     "dominance=True, dead_ends=True, beam_first=-1, beam_last=2048, equivalent_runs=True, safe_two=True, loose_safe=False, min_table_slots=0) -> (outcome, [(src_zone, src, dst_zone, dst, count)], nodes); dominance=False turns the full search's talon dominance off, "
     "safe_two=False the safe rule one rank further (loose_safe=True: an unsound form of it, tests only), min_table_slots=N the table's least limit (a power of two; 0: 2^23; it grows with the budget), "
     "dead_ends=False the dead-end test, equivalent_runs=False the equivalent runs (comparisons), beam_first=0 the beams (-1: 64 turning more than one, else 0); progress, a writable byte, gets the most progress of a position searched "
     "(cards on the foundations plus cards turned up since the root)"},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__cklondike(void)
{
    for (int x = 0; x < 52; x++) {
        BUILDERS[x] = 0;
        BUILDERS_OF_HOSTS[x] = 0;
        for (int y = 0; y < 52; y++) {
            if (builds_on(y, x))
                BUILDERS[x] |= 1ULL << y;
            if (builds_on(x, y))
                BUILDERS_OF_HOSTS[x] |= 1ULL << y;
        }
    }
    uint64_t seed = 0x6B6C6F6E64696BULL;
    for (int w = 0; w < 2; w++) {
        for (int j = 0; j < MAXPILE; j++) {
            ZDOWN[w][j] = splitmix(&seed);
            for (int x = 0; x < 52; x++)
                ZP[j][x][w] = splitmix(&seed);
        }
        for (int x = 0; x < 52; x++)
            ZT[x][w] = splitmix(&seed);
        ZOBRIST_FILL(ZCUR[w], &seed);
        ZOBRIST_FILL(ZRED[w], &seed);
    }
    ZOBRIST_FILL(ZUP, &seed); /* after the others, which keep their values */
    return create_core_module("_cklondike",
                              "The compiled Klondike search of accordion.solver; _pyklondike.py is its twin.",
                              methods);
}
