/* _cstreets' position (included by _cstreets.c after _ccommon.h): the piles and foundations,
 * the key kept as cards come and go, the safe foundation moves and the frozen-cards test */
#ifndef ACCORDION_CSTREETS_POS_H
#define ACCORDION_CSTREETS_POS_H

#define MAXP 10
#define MAXPILE 52
#define MAXMOVES 128
#define MAXDEPTH 200000 /* frames on the heap; deeper positions are cut (then LOST is not claimed) */
#define MAX_SLOTS ((size_t)1 << 23)
#define TO_FOUND 255
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
    /* max_nodes: the limit the search reads, set by the pass scheduler (_cschedule.h) to the
     * attempt's or the best-first pass's end; budget: the caller's (0: none) */
    uint64_t nodes, max_nodes, budget;
    double start, deadline;
    volatile const uint8_t *stop;
    int stopped, truncated;
    int attempt;          /* whether the attempt is a restart (its moves shaken by noise) */
    uint64_t rng;         /* the attempt's noise generator */
    uint64_t attempt_nodes; /* this attempt's allowance (the scheduler's limit - its first node) */
    int quick_over;       /* never raised: the attempts keep no share of the clock apart */
    int oom;              /* memory ran out where the scheduler cannot tell (a win's line) */
    uint64_t best_first_nodes; /* the best-first pass's allowance */
    const struct Root *root; /* the position to go back to for each pass */
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

#endif
