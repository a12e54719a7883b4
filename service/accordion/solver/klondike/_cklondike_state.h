/*
 * _cklondike_state.h: part of the _cklondike core (included once, by _cklondike.c, which says
 * what the search is): the limits, the position (KState) and the search's context (Ctx), the
 * position's key and the talon dominance, and the small rules every move asks (safe, ...).
 */
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
    int safe_talon; /* a safe talon card home alone (see safe_talon_card); off only for comparisons */
    int loose_talon; /* tests only: safe_talon without its conditions on the passes and ``cur`` (unsound) */
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
