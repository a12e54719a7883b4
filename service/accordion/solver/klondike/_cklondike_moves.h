/*
 * _cklondike_moves.h: part of the _cklondike core (included once, by _cklondike.c, after
 * _cklondike_state.h): the moves of a position (gen_moves, with the cards that could receive a
 * run, the run moves and the twins' way home) and their effect (apply).
 */

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

/* A safe talon card home alone (issue 31, docs/solver.md, *Safe talon cards*), with passes
 * unlimited: turning one, the lowest talon index of the safe cards in reach (a card leaving the
 * talon changes no other card's reach); turning more, the talon's last card when ``cur`` is
 * canonically 0 (lonelybot's last-card rule: the last card is always in reach, and with the
 * waste a whole number of draws no card is reached that the talon without it does not reach).
 * ``loose_talon`` (tests only, unsound) drops the conditions on the passes and on ``cur``. */
static int safe_talon_card(const Ctx *c, const KState *s, KMove *m, int *k)
{
    if (s->tlen == 0 || (s->redeals >= 0 && !c->loose_talon))
        return 0;
    if (c->draw > 1) {
        int x = s->talon[s->tlen - 1];
        if ((canonical_cur(c, s) != 0 && !c->loose_talon) || !on_found(s, x) || !safe(c, s, x))
            return 0;
        add(m, k, M_TAL_FOUND, 0, 0, 1, s->tlen - 1, 0); /* drawn to without a REDEAL from any cur */
        return 1;
    }
    uint8_t idx[2 * MAXTALON], wrap[2 * MAXTALON];
    int nt = talon_reach(c, s, idx, wrap), best = -1;
    for (int q = 0; q < nt; q++)
        if (on_found(s, s->talon[idx[q]]) && safe(c, s, s->talon[idx[q]]) && (best < 0 || idx[q] < idx[best]))
            best = q;
    if (best < 0)
        return 0;
    add(m, k, M_TAL_FOUND, 0, 0, 1, idx[best], wrap[best]);
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
    if (c->safe_talon && safe_talon_card(c, s, m, &k))
        return k;
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
