/*
 * _cklondike_search.h: part of the _cklondike core (included once, by _cklondike.c, after
 * _cklondike_moves.h): the proofs of loss before a search (never_free, stuck), the depth-first
 * search, the beams, and what the pass scheduler (_cschedule.h) asks of Klondike.
 */

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
