/*
 * _cstreets: the compiled search of accordion.solver for open single-card tableaux (Streets and
 * Alleys; docs/solver.md, "Streets and Alleys"), mirrored step for step by _pystreets.py (same
 * move order, same node counts, same verdicts).
 *
 * The position is plain data: the tableau piles (bottom to top, every card face up) and the
 * foundations as a count per suit. One card moves at a time: a top card onto its foundation,
 * onto a top card one rank higher as the build rule says (any suit, alternate colours, same
 * suit), or into an empty pile (any card, or only a King).
 *
 * Depth-first search with a table of every position visited, keyed on a canonical form: the
 * piles as a multiset (their order never matters, and every empty pile is the same), summed
 * from two 64-bit Zobrist hashes per pile; the foundations follow from the piles. The first
 * visit of a position is its only expansion, so an exhausted search proves the loss. The cuts,
 * each argued in docs/solver.md:
 *   - a top card that is safe on its foundation (every card that could ever be built on it is
 *     already up, or could go up itself the moment it is uncovered and host nothing) goes there
 *     as the only move;
 *   - a card goes into the first empty pile only, and never from a pile it is alone in;
 *   - the card the last move moved never moves again between piles as the next move (x from A
 *     to B then B to C is the one move A to C, tried from the position before);
 *   - every pile descending bottom to top is a win (the lowest top always goes up next);
 *   - a position where some cards can never move again is lost (frozen).
 * The search restarts with noise on its move order, and between the first attempt and the second
 * a greedy best-first pass (best_first) tries the positions that look nearest a win first, with
 * the same moves; a pass or attempt that runs out of positions proves the loss.
 * The moves are made and unmade in place. The GIL is released; the budgets (nodes, seconds)
 * and the caller's stop flag are read every 1024 positions, as in _csolver.c.
 */
#include "_ccommon.h"

#define MAXP 10
#define MAXPILE 52
#define MAXMOVES 128
#define MAXDEPTH 200000 /* frames on the heap; deeper positions are cut (then LOST is not claimed) */
#define MAX_SLOTS ((size_t)1 << 23)
#define TO_FOUND 255
/* Restarts: the first attempt may visit this many positions, each next one twice as many. */
#define FIRST_ATTEMPT 20000
/* The best-first pass between the first attempt and the second may visit this many positions. */
#define BEST_FIRST_NODES 400000
#define NO_CARD 255

enum { BUILD_ANY_SUIT = 0, BUILD_ALTERNATE = 1, BUILD_SAME_SUIT = 2 };

typedef struct {
    uint8_t src, dst; /* dst TO_FOUND: the card's foundation */
} SMove;

typedef struct {
    int npiles, space_any;
    int frozen_test;      /* whether positions where some cards can never move are cut (frozen) */
    uint8_t card[MAXP][MAXPILE];
    uint8_t n[MAXP];
    uint8_t found[4];
    uint8_t pile_of[52], idx_of[52]; /* where each card in a pile lies, kept as cards come and go */
    uint64_t ph[2][MAXP]; /* each pile's Zobrist sum, kept as cards come and go */
    uint64_t pm[2][MAXP]; /* each pile's part of the key, mix64(ph + w), made again when a move changes the pile */
    uint64_t ksum[2];     /* the key's two words before the empty-slot bit: the sums of pm */
    uint64_t inpiles;     /* the cards in the piles as a set (bit x: card x), kept as cards come and go */
    int rises;            /* cards sitting on a card of their rank or lower: 0 is a win */
    uint64_t hosts[52];     /* bit h of hosts[x]: card x goes on card h */
    uint64_t nodes, max_nodes;
    double start, deadline;
    volatile const uint8_t *stop;
    int stopped, truncated;
    int attempt;          /* restarts so far (see streets_solve) */
    uint64_t rng;         /* the attempt's noise generator */
    uint64_t attempt_end; /* the node count at which this attempt gives up */
    uint64_t attempt_nodes; /* this attempt's allowance (attempt_end - its first node) */
    KeySet seen;
    int depth;
    struct Frame *frames; /* one per position on the current line, grown on demand */
    int nframes;
    SMove *moves;         /* the frames' moves, frame after frame (from Frame.at) */
    struct MoveKey *keys; /* the parts of the key each of them makes */
    size_t nkeys;         /* the room in both */
    SMove *line;          /* a win's moves from the root, filled by the pass that found it */
    int nline;
} Ctx;

/* The parts of the key a move changes: the new pm of its source pile (both words), then of its
 * destination pile (unused for a move to the foundations). */
typedef struct MoveKey {
    uint64_t src[2], dst[2];
} MoveKey;

/* One position on the current line: where its moves and the parts of the key each makes start
 * in Ctx.moves and Ctx.keys (the parts made and their slots prefetched with the moves; kept
 * apart, as many as there are moves, so that a frame is one cache line on lines thousands of
 * positions long), how many, the next to try, the card the last one moved, and the parts of
 * the key it replaced (put back when it is taken back). */
typedef struct Frame {
    int nm, next, card;
    uint32_t at;
    uint64_t kept_sum[2];
    MoveKey kept;
} Frame;

static uint64_t ZP[2][MAXPILE][52];
/* LOWER[x]: the cards of x's suit below it, as a set (bit y: card y) */
static uint64_t LOWER[52];

/* rank and suit by table: they are read for every card of every pile at each expansion */
static const uint8_t RANK_OF[52] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
static const uint8_t SUIT_OF[52] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
static inline int rank_of(int c) { return RANK_OF[c]; }
static inline int suit_of(int c) { return SUIT_OF[c]; }
static inline int red_suit(int s) { return s == 1 || s == 2; }

static inline int top(const Ctx *c, int i) { return c->card[i][c->n[i] - 1]; }

static inline int on_found(const Ctx *c, int x) { return c->found[suit_of(x)] == rank_of(x) - 1; }

/* Whether card x, able to go up, loses nothing by going up now (docs/solver.md, "Safe foundation
 * moves"): every card y that could be built on it (one rank lower, of a suit the build allows)
 * is either up already or could itself go up the moment it is uncovered (its suit's foundation
 * is one below it) and could never host anything (every card that could be built on y is up).
 * Then a line that puts y on x wins as well with y going up instead, so x is never needed as
 * a host and could only block the cards beneath it. Aces and Twos always (an Ace never needs
 * a host). */
static int safe(const Ctx *c, int x)
{
    int r = rank_of(x);
    if (r <= 2)
        return 1;
    for (int t = 0; t < 4; t++) {
        int y = t * 13 + r - 2; /* rank r - 1 of suit t */
        if (!(c->hosts[y] >> x & 1) || c->found[t] >= r - 1)
            continue;
        if (c->found[t] < r - 2)
            return 0;
        for (int u = 0; u < 4; u++)
            if ((c->hosts[u * 13 + r - 3] >> y & 1) && c->found[u] < r - 2)
                return 0;
    }
    return 1;
}

/* Whether the position is dead: some cards can never move again, so the deal is lost
 * (docs/solver.md, "Frozen cards"). A set F of cards, each pile's bottom level[i] cards, is
 * frozen when every pile holds one (so no pile ever empties: no space) and each pile's highest
 * card x of F can go neither up (a lower card of its suit is in F) nor onto a host (each card x
 * builds on is up, or lies under a card of F). Then no card of F ever moves: the first to move
 * would be some pile's highest card of F, with F's cards all still in place, which blocks
 * every destination. The largest such F is found by lowering each level while its highest
 * card fails; the position is dead when no level reaches 0 (F is not empty). */
static int frozen(const Ctx *c)
{
    /* F and G as card sets, the levels as before: G is F less each pile's highest card of F
     * (the cards under a card of F). With every card in a pile or up, "a lower card of x's
     * suit in F" is LOWER[x] & F, and "every host up or under a card of F" is that x's hosts
     * in the piles all lie in G. Lowering a level takes x out of F and the card below it
     * (the pile's new highest of F) out of G. */
    uint8_t level[MAXP];
    uint64_t in = c->inpiles, f = in, g = in;
    for (int i = 0; i < c->npiles; i++) {
        if (c->n[i] == 0)
            return 0;
        level[i] = c->n[i];
        g &= ~(1ULL << c->card[i][c->n[i] - 1]);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < c->npiles; i++) {
            for (;;) {
                int x = c->card[i][level[i] - 1];
                if ((LOWER[x] & f) && !(c->hosts[x] & in & ~g))
                    break;
                f &= ~(1ULL << x);
                if (--level[i] == 0)
                    return 0;
                g &= ~(1ULL << c->card[i][level[i] - 1]);
                changed = 1;
            }
        }
    }
    return 1;
}

/* Every pile descending from bottom to top: the lowest top is then the lowest card of its
 * suit left, so it goes up, and the piles stay descending: a win. */
static inline int is_won(const Ctx *c) { return c->rises == 0; }

/* The key: the sums over the piles of mix64(ph[w][i] + w), kept in ksum (rekey). */
static inline void key_of(const Ctx *c, uint64_t *a, uint64_t *b)
{
    *a = c->ksum[0];
    *b = c->ksum[1] | 1; /* never the empty slot */
}

/* Pile i's part of the key made again after its cards changed. */
static inline void rekey(Ctx *c, int i)
{
    for (int w = 0; w < 2; w++) {
        uint64_t m = mix64(c->ph[w][i] + (uint64_t)w);
        c->ksum[w] += m - c->pm[w][i];
        c->pm[w][i] = m;
    }
}

static void rekey_all(Ctx *c)
{
    c->ksum[0] = c->ksum[1] = 0;
    for (int i = 0; i < c->npiles; i++) {
        c->pm[0][i] = c->pm[1][i] = 0;
        rekey(c, i);
    }
}

static inline void push_card(Ctx *c, int i, int x)
{
    int j = c->n[i]++;
    c->card[i][j] = (uint8_t)x;
    c->pile_of[x] = (uint8_t)i;
    c->idx_of[x] = (uint8_t)j;
    c->inpiles |= 1ULL << x;
    if (j && rank_of(x) >= rank_of(c->card[i][j - 1]))
        c->rises++;
    c->ph[0][i] += ZP[0][j][x];
    c->ph[1][i] += ZP[1][j][x];
}

static inline int pop_card(Ctx *c, int i)
{
    int j = --c->n[i], x = c->card[i][j];
    c->inpiles &= ~(1ULL << x);
    if (j && rank_of(x) >= rank_of(c->card[i][j - 1]))
        c->rises--;
    c->ph[0][i] -= ZP[0][j][x];
    c->ph[1][i] -= ZP[1][j][x];
    return x;
}

static void do_move(Ctx *c, SMove mv)
{
    int x = pop_card(c, mv.src);
    rekey(c, mv.src);
    if (mv.dst == TO_FOUND)
        c->found[suit_of(x)]++;
    else {
        push_card(c, mv.dst, x);
        rekey(c, mv.dst);
    }
}

/* The key of the position move mv leads to, without making it: the new parts of the two piles
 * it changes into *k, the key's words into a, b. */
static inline void child_key(const Ctx *c, SMove mv, MoveKey *k, uint64_t *a, uint64_t *b)
{
    int x = top(c, mv.src), j = c->n[mv.src] - 1;
    uint64_t h[2];
    for (int w = 0; w < 2; w++) {
        k->src[w] = mix64(c->ph[w][mv.src] - ZP[w][j][x] + (uint64_t)w);
        h[w] = c->ksum[w] - c->pm[w][mv.src] + k->src[w];
        if (mv.dst != TO_FOUND) {
            k->dst[w] = mix64(c->ph[w][mv.dst] + ZP[w][c->n[mv.dst]][x] + (uint64_t)w);
            h[w] += k->dst[w] - c->pm[w][mv.dst];
        }
    }
    *a = h[0];
    *b = h[1] | 1;
}

/* do_move with the key's parts made beforehand by child_key; the parts it replaces into *kept,
 * *kept_sum, for undo_keyed. */
static inline void do_keyed(Ctx *c, SMove mv, const MoveKey *k, MoveKey *kept, uint64_t *kept_sum)
{
    int x = pop_card(c, mv.src);
    for (int w = 0; w < 2; w++) {
        kept_sum[w] = c->ksum[w];
        kept->src[w] = c->pm[w][mv.src];
        c->pm[w][mv.src] = k->src[w];
        c->ksum[w] += k->src[w] - kept->src[w];
    }
    if (mv.dst == TO_FOUND)
        c->found[suit_of(x)]++;
    else {
        push_card(c, mv.dst, x);
        for (int w = 0; w < 2; w++) {
            kept->dst[w] = c->pm[w][mv.dst];
            c->pm[w][mv.dst] = k->dst[w];
            c->ksum[w] += k->dst[w] - kept->dst[w];
        }
    }
}

/* Take back do_keyed's move mv, which moved card x. */
static inline void undo_keyed(Ctx *c, SMove mv, int x, const MoveKey *kept, const uint64_t *kept_sum)
{
    if (mv.dst == TO_FOUND)
        c->found[suit_of(x)]--;
    else {
        pop_card(c, mv.dst);
        c->pm[0][mv.dst] = kept->dst[0];
        c->pm[1][mv.dst] = kept->dst[1];
    }
    push_card(c, mv.src, x);
    c->pm[0][mv.src] = kept->src[0];
    c->pm[1][mv.src] = kept->src[1];
    c->ksum[0] = kept_sum[0];
    c->ksum[1] = kept_sum[1];
}

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
 * restarting: when what is left (of max_nodes; of the clock, at the rate so far) is less than
 * the next attempt's allowance, that attempt could not finish anyway, and this one keeps its
 * table and its progress (a search that ends within the budget still proves the loss). */
static int last_attempt(const Ctx *c)
{
    uint64_t next = 2 * c->attempt_nodes;
    if (c->max_nodes && c->max_nodes - c->nodes < next)
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
    if (c->max_nodes && c->nodes > c->max_nodes)
        return R_STOP;
    if (c->nodes > c->attempt_end) {
        if (!last_attempt(c))
            return R_STOP;
        c->attempt_end = UINT64_MAX;
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

/* ---- the best-first pass (docs/solver.md, "Best-first pass") ---- */

/* A position the best-first pass has reached: the piles one after another, the pile sizes, the
 * foundations, the card the move into it moved (NO_CARD at the root), and how it was reached. */
typedef struct {
    uint8_t card[52];
    uint8_t n[MAXP];
    uint8_t found[4];
    uint8_t last, src, dst;
    uint32_t parent;
} BState;


/* How far the position looks from a win, lower first: cards not up, cards sitting on a card of
 * their rank or lower (each must move before the piles descend), cards above the next card of
 * each suit (they must move before it goes up), spaces (a space takes any card) counting against. */
static int bf_score(const Ctx *c)
{
    int up = 0, blockers = 0, spaces = 0;
    for (int t = 0; t < 4; t++) { /* the next card of each suit, found where it lies */
        up += c->found[t];
        if (c->found[t] < 13) {
            int y = t * 13 + c->found[t];
            blockers += c->n[c->pile_of[y]] - 1 - c->idx_of[y];
        }
    }
    for (int i = 0; i < c->npiles; i++)
        spaces += c->n[i] == 0;
    return 1000 + 10 * (52 - up) + 6 * c->rises + 3 * blockers - 10 * spaces;
}

static void bf_store(const Ctx *c, BState *s)
{
    int k = 0;
    for (int i = 0; i < c->npiles; i++) {
        s->n[i] = c->n[i];
        for (int j = 0; j < c->n[i]; j++)
            s->card[k++] = c->card[i][j];
    }
    memcpy(s->found, c->found, 4);
}

/* Makes the current position (a position the pass has stored) into s: only the piles that
 * differ are made again (the pass mostly goes on from a child of the position before), all
 * emptied before any is filled (a card may change piles: the set of cards in the piles and
 * where each lies must end as s has them). */
static void bf_load(Ctx *c, const BState *s)
{
    const uint8_t *from[MAXP];
    unsigned redo = 0;
    const uint8_t *cards = s->card;
    for (int i = 0; i < c->npiles; cards += s->n[i], i++) {
        from[i] = cards;
        if (s->n[i] == c->n[i] && memcmp(c->card[i], cards, s->n[i]) == 0)
            continue;
        redo |= 1u << i;
        while (c->n[i])
            pop_card(c, i);
    }
    for (int i = 0; i < c->npiles; i++)
        if (redo >> i & 1) {
            for (int j = 0; j < s->n[i]; j++)
                push_card(c, i, from[i][j]);
            rekey(c, i);
        }
    memcpy(c->found, s->found, 4);
}

/* The win that the best-first pass reached: the moves from the root to state `parent`, then mv. */
static int bf_line(Ctx *c, const BState *st, uint32_t parent, SMove mv)
{
    int len = 1;
    for (uint32_t i = parent; i != 0; i = st[i].parent)
        len++;
    free(c->line);
    c->line = (SMove *)malloc((size_t)len * sizeof(SMove));
    if (c->line == NULL)
        return 0;
    c->nline = len;
    c->line[len - 1] = mv;
    int q = len - 2;
    for (uint32_t i = parent; i != 0; i = st[i].parent, q--) {
        c->line[q].src = st[i].src;
        c->line[q].dst = st[i].dst;
    }
    return 1;
}

/* Greedy best-first search from the root: the position of least bf_score is expanded next (the
 * latest reached among equals), with the moves gen_moves gives (the same cuts as the depth-first
 * attempts, so a pass that runs out of positions has searched everything reachable and proves the
 * loss). Counts positions as enter() does and stops after `allowance` of them: R_WIN (the line in
 * c->line), R_DEAD (exhausted), R_STOP. The current position is left anywhere. */
static int best_first(Ctx *c, uint64_t allowance)
{
    uint64_t end = c->nodes + allowance;
    size_t cap = 1024, nst = 0, nheap = 0;
    BState *st = (BState *)malloc(cap * sizeof(BState));
    HeapItem *heap = (HeapItem *)malloc(cap * sizeof(HeapItem));
    KeySet seen;
    int r = R_STOP, have_seen = ks_init(&seen, (size_t)1 << 14, MAX_SLOTS, 1);
    SMove moves[MAXMOVES];
    MoveKey keys[MAXMOVES], kept = {{0, 0}, {0, 0}};
    uint64_t kept_sum[2], ka[MAXMOVES], kb[MAXMOVES];
    if (st == NULL || heap == NULL || !have_seen)
        goto done; /* out of memory: the pass gives up, the attempts go on */
    c->nodes++;    /* the root, as enter() counts it */
    if (c->max_nodes && c->nodes > c->max_nodes)
        goto done;
    if (is_won(c)) {
        r = R_WIN;
        c->nline = 0;
        goto done;
    }
    {
        uint64_t a, b;
        key_of(c, &a, &b);
        ks_add(&seen, a, b);
    }
    bf_store(c, &st[0]);
    st[0].last = NO_CARD;
    st[0].parent = 0;
    nst = 1;
    heap_push(heap, &nheap, (HeapItem){((uint64_t)bf_score(c) << 32) | 0xFFFFFFFFu, 0});
    while (nheap) {
        HeapItem it = heap_pop(heap, &nheap);
        bf_load(c, &st[it.idx]);
        int nm = gen_moves(c, moves, st[it.idx].last == NO_CARD ? -1 : st[it.idx].last);
        for (int q = 0; q < nm; q++) { /* the children's keys first, their slots fetched side by side */
            child_key(c, moves[q], &keys[q], &ka[q], &kb[q]);
            ks_prefetch(&seen, ka[q], kb[q]);
        }
        for (int q = 0; q < nm; q++) {
            int x = top(c, moves[q].src);
            do_keyed(c, moves[q], &keys[q], &kept, kept_sum);
            c->nodes++;
            if ((c->max_nodes && c->nodes > c->max_nodes) || c->nodes > end)
                goto done;
            if ((c->nodes & 1023) == 0 &&
                ((c->stop != NULL && *c->stop) || (c->deadline > 0 && now_seconds() > c->deadline))) {
                c->stopped = 1;
                goto done;
            }
            if (is_won(c)) {
                r = bf_line(c, st, it.idx, moves[q]) ? R_WIN : R_STOP;
                goto done;
            }
            if (!ks_has_or_add(&seen, ka[q], kb[q])) {
                if (c->frozen_test && frozen(c)) {
                    undo_keyed(c, moves[q], x, &kept, kept_sum);
                    continue; /* lost: not stored, never expanded */
                }
                if (nst == cap) {
                    cap *= 2;
                    BState *ns = (BState *)realloc(st, cap * sizeof(BState));
                    if (ns != NULL)
                        st = ns;
                    HeapItem *nh = (HeapItem *)realloc(heap, cap * sizeof(HeapItem));
                    if (nh != NULL)
                        heap = nh;
                    if (ns == NULL || nh == NULL)
                        goto done;
                }
                bf_store(c, &st[nst]);
                st[nst].last = (uint8_t)x;
                st[nst].src = moves[q].src;
                st[nst].dst = moves[q].dst;
                st[nst].parent = it.idx;
                heap_push(heap, &nheap, (HeapItem){((uint64_t)bf_score(c) << 32) | (0xFFFFFFFFu - (uint32_t)nst),
                                                   (uint32_t)nst});
                nst++;
            }
            undo_keyed(c, moves[q], x, &kept, kept_sum);
        }
    }
    r = R_DEAD;
done:
    if (have_seen)
        ks_free(&seen);
    free(st);
    free(heap);
    return r;
}

/* ---- the win as moves: (dst_zone 0 tableau / 1 foundation, src, dst) ---- */

static int push(PyObject *out, int zone, int src, int dst)
{
    return append_new(out, Py_BuildValue("(iii)", zone, src, dst));
}

static int expand(Ctx *c, PyObject *out)
{
    for (int q = 0; q < c->nline; q++) {
        SMove mv = c->line[q];
        int ok = mv.dst == TO_FOUND ? push(out, 1, mv.src, suit_of(top(c, mv.src))) : push(out, 0, mv.src, mv.dst);
        if (!ok)
            return 0;
        do_move(c, mv);
    }
    for (;;) { /* play out: the lowest top goes up */
        int best = -1;
        for (int i = 0; i < c->npiles; i++)
            if (c->n[i] && (best < 0 || rank_of(top(c, i)) < rank_of(top(c, best))))
                best = i;
        if (best < 0)
            return 1;
        if (!push(out, 1, best, suit_of(top(c, best))))
            return 0;
        SMove mv = {(uint8_t)best, TO_FOUND};
        do_move(c, mv);
    }
}

/* ---- Python entry ---- */

static int builds_on(int build, int x, int h)
{
    if (rank_of(h) != rank_of(x) + 1)
        return 0;
    if (build == BUILD_ALTERNATE)
        return red_suit(suit_of(x)) != red_suit(suit_of(h));
    if (build == BUILD_SAME_SUIT)
        return suit_of(x) == suit_of(h);
    return 1;
}

static int read_position(PyObject *piles, PyObject *found, Ctx *c)
{
    if (!PyList_Check(piles) || !PyList_Check(found)) {
        PyErr_SetString(PyExc_TypeError, "piles: list of bytes, found: list of 4 int");
        return 0;
    }
    Py_ssize_t np = PyList_GET_SIZE(piles);
    if (np < 1 || np > MAXP || PyList_GET_SIZE(found) != 4) {
        PyErr_SetString(PyExc_ValueError, "1..10 piles, 4 foundations");
        return 0;
    }
    c->npiles = (int)np;
    for (Py_ssize_t i = 0; i < np; i++) {
        PyObject *p = PyList_GET_ITEM(piles, i);
        if (!PyBytes_Check(p) || PyBytes_GET_SIZE(p) > MAXPILE) {
            PyErr_SetString(PyExc_ValueError, "a pile is bytes of at most 52 cards");
            return 0;
        }
        const uint8_t *cards = (const uint8_t *)PyBytes_AS_STRING(p);
        if (!cards_valid(cards, PyBytes_GET_SIZE(p)))
            return 0;
        for (Py_ssize_t j = 0; j < PyBytes_GET_SIZE(p); j++)
            push_card(c, (int)i, cards[j]);
    }
    if (!read_foundations(found, 4, c->found))
        return 0;
    rekey_all(c);
    return 1;
}

/* The root position, to go back to for each attempt and to write out a win's moves. */
typedef struct {
    uint8_t card[MAXP][MAXPILE], n[MAXP], found[4], pile_of[52], idx_of[52];
    uint64_t ph[2][MAXP], pm[2][MAXP], ksum[2], inpiles;
    int rises;
} Root;

static void save_root(const Ctx *c, Root *r)
{
    memcpy(r->card, c->card, sizeof r->card);
    memcpy(r->n, c->n, sizeof r->n);
    memcpy(r->found, c->found, sizeof r->found);
    memcpy(r->pile_of, c->pile_of, sizeof r->pile_of);
    memcpy(r->idx_of, c->idx_of, sizeof r->idx_of);
    memcpy(r->ph, c->ph, sizeof r->ph);
    memcpy(r->pm, c->pm, sizeof r->pm);
    memcpy(r->ksum, c->ksum, sizeof r->ksum);
    r->inpiles = c->inpiles;
    r->rises = c->rises;
}

static void reset_to_root(Ctx *c, const Root *r)
{
    memcpy(c->card, r->card, sizeof r->card);
    memcpy(c->n, r->n, sizeof r->n);
    memcpy(c->found, r->found, sizeof r->found);
    memcpy(c->pile_of, r->pile_of, sizeof r->pile_of);
    memcpy(c->idx_of, r->idx_of, sizeof r->idx_of);
    memcpy(c->ph, r->ph, sizeof r->ph);
    memcpy(c->pm, r->pm, sizeof r->pm);
    memcpy(c->ksum, r->ksum, sizeof r->ksum);
    c->inpiles = r->inpiles;
    c->rises = r->rises;
    c->depth = 0;
    c->truncated = 0;
}

/* The depth-first win's moves: each frame's last move tried. */
static int line_from_frames(Ctx *c)
{
    free(c->line);
    c->nline = c->depth;
    c->line = (SMove *)malloc((size_t)(c->depth + 1) * sizeof(SMove));
    if (c->line == NULL)
        return 0;
    for (int q = 0; q < c->depth; q++)
        c->line[q] = c->moves[c->frames[q].at + c->frames[q].next - 1];
    return 1;
}

static PyObject *py_streets_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"piles", "found", "build", "space_any", "max_nodes", "max_seconds", "stop",
                             "first_attempt", "best_first_nodes", "frozen_test", NULL};
    PyObject *piles, *found, *stop_obj = NULL;
    int build, space_any, frozen_test = 1;
    unsigned long long max_nodes = 0, first_attempt = FIRST_ATTEMPT, best_first_nodes = BEST_FIRST_NODES;
    double max_seconds = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOip|KdOKKp", kwlist, &piles, &found, &build, &space_any,
                                     &max_nodes, &max_seconds, &stop_obj, &first_attempt, &best_first_nodes,
                                     &frozen_test))
        return NULL;
    if (first_attempt < 1) {
        PyErr_SetString(PyExc_ValueError, "first_attempt is at least 1");
        return NULL;
    }
    if (build < BUILD_ANY_SUIT || build > BUILD_SAME_SUIT) {
        PyErr_SetString(PyExc_ValueError, "build is 0 (any suit), 1 (alternate colours) or 2 (same suit)");
        return NULL;
    }
    Ctx *c = (Ctx *)calloc(1, sizeof(Ctx));
    if (c == NULL)
        return PyErr_NoMemory();
    if (!read_position(piles, found, c)) {
        free(c);
        return NULL;
    }
    for (int x = 0; x < 52; x++)
        for (int h = 0; h < 52; h++)
            if (builds_on(build, x, h))
                c->hosts[x] |= 1ULL << h;
    c->space_any = space_any;
    c->frozen_test = frozen_test;
    c->max_nodes = max_nodes;
    Py_buffer stop_view;
    if (!open_search(&c->seen, (size_t)1 << 14, MAX_SLOTS, 1, stop_obj, &stop_view, &c->stop)) {
        free(c);
        return NULL;
    }
    Root root;
    save_root(c, &root);
    int r, ok = 1, best_first_done = best_first_nodes == 0;
    c->attempt_nodes = first_attempt;
    Py_BEGIN_ALLOW_THREADS
    c->start = now_seconds();
    c->deadline = max_seconds > 0 ? c->start + max_seconds : 0;
    /* Restarts: attempt a visits at most first_attempt * 2^a positions, its table fresh, the
     * moves of equal rank after the first attempt in an order shuffled by noise seeded by a.
     * A win is a win; an attempt that ends without reaching its limit (or the depth cut) has
     * searched everything reachable, so its LOST is a proof whatever the order. The attempt
     * that could not be followed by a whole one runs to the end of the budget (last_attempt).
     * Between the first attempt and the second, the best-first pass (best_first). */
    for (;;) {
        c->attempt_end = c->nodes + c->attempt_nodes;
        c->rng = (uint64_t)c->attempt;
        r = dfs(c);
        if (r == R_WIN && !line_from_frames(c))
            r = R_STOP, ok = 0;
        if (r != R_STOP || c->stopped || (c->max_nodes && c->nodes > c->max_nodes))
            break;
        reset_to_root(c, &root);
        if (!best_first_done) {
            best_first_done = 1;
            r = best_first(c, best_first_nodes);
            if (r != R_STOP || c->stopped || (c->max_nodes && c->nodes > c->max_nodes))
                break;
            reset_to_root(c, &root);
        }
        c->attempt++;
        c->attempt_nodes *= 2;
        if (!(ok = ks_reset(&c->seen)))
            break;
    }
    Py_END_ALLOW_THREADS
    close_search(&c->seen, &stop_view);
    int outcome = search_outcome(r == R_WIN, r == R_STOP || c->truncated);
    PyObject *moves = line_list(ok);
    if (moves != NULL && outcome == OUT_WON) {
        reset_to_root(c, &root);
        if (!expand(c, moves))
            Py_CLEAR(moves);
    }
    PyObject *res = solve_result(outcome, moves, c->nodes);
    free(c->frames);
    free(c->keys);
    free(c->moves);
    free(c->line);
    free(c);
    return res;
}

static PyMethodDef methods[] = {
    {"streets_solve", (PyCFunction)(void (*)(void))py_streets_solve, METH_VARARGS | METH_KEYWORDS,
     "streets_solve(piles, found, build, space_any, max_nodes=0, max_seconds=0, stop=None, "
     "first_attempt=20000, best_first_nodes=400000, frozen_test=True) -> "
     "(outcome, [(dst_zone, src, dst)], nodes)"},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__cstreets(void)
{
    uint64_t seed = 0x73747265657473ULL;
    ZOBRIST_FILL(ZP, &seed);
    for (int x = 0; x < 52; x++)
        LOWER[x] = ((1ULL << (x % 13)) - 1) << (x - x % 13);
    return create_core_module("_cstreets",
                              "The compiled open-tableau search of accordion.solver (streets/README.md).",
                              methods);
}
