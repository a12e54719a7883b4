/*
 * _cspider: the compiled Spider search of accordion.solver (docs/solver.md, "Spider"),
 * mirrored step for step by _pyspider.py (same move order, same node counts, same verdicts).
 *
 * The position is plain data: ten tableau piles (bottom to top, face-down cards first), how
 * many cards of each are face down, the stock (dealt from the front: an index into the root's
 * stock) and how many suits are lifted off. Equal cards (two decks; 2 or 1 suits: four or
 * eight copies) are the same byte, so they are interchangeable in every key.
 *
 * Depth-first search with a table of every position visited: the piles in order while a
 * DEAL is to come (a DEAL puts card j on pile j, so which pile is which matters), as a
 * multiset once the stock is empty, and the stock's length; the suits lifted follow from the
 * rest. Moves are tried by class: onto a card of the same suit one rank higher, a whole unit
 * that turns a card, one that empties its pile, one off a card it was not built on, into a
 * space, the rest, and the DEAL last. A first, quick pass leaves out "the rest" (a unit moved
 * off its natural host onto a twin one, part of a unit onto another suit, part of a unit or a
 * unit off its host into a space): it may miss wins, so when it finds none the full search
 * runs from scratch, over every legal move (with the stock empty: the first space only, and
 * no whole pile into a space, both the same position), and its LOST is a proof. Beams of
 * growing width from the root over the quick pass's moves, kept by a worth of the position
 * (beam(), worth()), run before it (16, 32, 64: cheap) and between the two (128 … 8192): they
 * win deals the depth-first passes, stuck in their first branches, do not, and like the quick
 * pass they may only report a win. A deal of two or four suits runs the staged pass first (stage()):
 * best first between two DEALs, with runs of several units moved through spaces in one move,
 * then the DEAL from the best positions of each stage; it too may only report a win. The GIL is
 * released; the budgets and the caller's stop flag are read every 1024 positions.
 */
#include "_ccommon.h"

#define NPILES 10
#define MAXPILE 104
#define MAXSTOCK 104
#define MAXMOVES 1400
#define MAXDEPTH 1000
#define MAX_SLOTS ((size_t)1 << 23)
#define QUICK_NODES 1000000
#define BEAM_FIRST_WIDTH 16 /* the beams: 16, 32, 64 before the quick pass, 128 ... 8192 after */
#define BEAM_NARROW_WIDTH 64
#define BEAM_LAST_WIDTH 8192
#define SUITLEN 13
#define NCLASSES 7

enum { P_SUIT, P_TURN, P_EMPTY, P_FREE, P_SPACE, P_REST, P_DEAL };

typedef struct {
    int8_t src;   /* -1: the DEAL */
    uint8_t dst;
    int8_t count; /* < 0: a run of -count cards, several units, moved by way of the spaces (run_moves) */
} SMove;

typedef struct {
    uint8_t card[NPILES][MAXPILE];
    uint8_t n[NPILES], down[NPILES];
    uint8_t sp, found; /* next stock card; suits lifted off */
} SState;

typedef struct {
    uint64_t nodes, max_nodes;
    double deadline;
    volatile const uint8_t *stop;
    int stopped, truncated, quick;
    int staged; /* the staged pass: runs through spaces too, no DEAL (gen_moves) */
    int stage_branch, stage_spread; /* the staged pass's setting (StageSetting) */
    uint8_t stock[MAXSTOCK];
    int slen;
    KeySet seen;
    int root_down, best; /* best: the most progress of a position made (note_progress) */
    int depth;
    SMove path[MAXDEPTH];
    SState st[MAXDEPTH + 1];
    SMove moves[MAXDEPTH + 1][MAXMOVES];
} Ctx;

static uint64_t ZP[2][MAXPILE][52], ZDOWN[2][MAXPILE + 1], ZIDX[2][NPILES], ZS[2][MAXSTOCK + 1];

static inline int rank_of(int c) { return c % 13 + 1; }

static void key_of(const Ctx *c, const SState *s, uint64_t *a, uint64_t *b)
{
    int ordered = s->sp < c->slen;
    uint64_t h[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < NPILES; i++) {
            uint64_t p = ZDOWN[w][s->down[i]];
            for (int j = 0; j < s->n[i]; j++)
                p += ZP[w][j][s->card[i][j]];
            h[w] += mix64(p + (ordered ? ZIDX[w][i] : (uint64_t)w));
        }
        h[w] ^= ZS[w][c->slen - s->sp];
    }
    *a = h[0];
    *b = h[1] | 1;
}

/* How many top cards of pile i make its unit (face up, one suit in sequence), as the engine. */
static int unit_length(const SState *s, int i)
{
    int n = 1, len = s->n[i], up = len - s->down[i];
    while (n < up) {
        int card = s->card[i][len - n];
        if (rank_of(card) == 13 || s->card[i][len - n - 1] != card + 1)
            break;
        n++;
    }
    return n;
}

static int gen_moves(const Ctx *c, const SState *s, SMove *out)
{
    SMove tmp[MAXMOVES];
    uint8_t cls_of[MAXMOVES];
    int nt = 0, nspaces = 0;
    int spaces[NPILES];
    for (int j = 0; j < NPILES; j++)
        if (s->n[j] == 0)
            spaces[nspaces++] = j;
    int has_stock = s->sp < c->slen;
    int ntargets = has_stock || nspaces == 0 ? nspaces : 1;
    for (int i = 0; i < NPILES; i++) {
        int n = s->n[i];
        if (!n)
            continue;
        int u = unit_length(s, i);
        for (int k = 1; k <= u; k++) {
            int x = s->card[i][n - k], whole = k == u, rest = n - k;
            int reveals = whole && rest == s->down[i] && rest > 0;
            int empties = rest == 0;
            int below = rest > s->down[i] ? s->card[i][rest - 1] : -1;
            int natural = below >= 0 && rank_of(below) == rank_of(x) + 1;
            for (int j = 0; j < NPILES; j++) {
                if (j == i || !s->n[j])
                    continue;
                int top = s->card[j][s->n[j] - 1];
                if (rank_of(top) != rank_of(x) + 1)
                    continue;
                int cls;
                if (top == x + 1 && below != x + 1)
                    cls = P_SUIT;
                else if (reveals)
                    cls = P_TURN;
                else if (empties)
                    cls = P_EMPTY;
                else if (whole && !natural)
                    cls = P_FREE;
                else
                    cls = P_REST;
                if (c->quick && cls == P_REST)
                    continue;
                if (nt < MAXMOVES) {
                    tmp[nt] = (SMove){(int8_t)i, (uint8_t)j, (int8_t)k};
                    cls_of[nt++] = (uint8_t)cls;
                }
            }
            if (empties && !has_stock)
                continue; /* a whole pile into a space: the same position */
            for (int q = 0; q < ntargets; q++) {
                int cls = reveals || (whole && !natural && !empties) ? P_SPACE : P_REST;
                if (c->quick && cls == P_REST)
                    continue;
                if (nt < MAXMOVES) {
                    tmp[nt] = (SMove){(int8_t)i, (uint8_t)spaces[q], (int8_t)k};
                    cls_of[nt++] = (uint8_t)cls;
                }
            }
        }
    }
    for (int i = 0; c->staged && nspaces > 0 && i < NPILES; i++) {
        /* A run of m >= 2 units, each on a card one rank higher than its foot, goes onto a pile
         * whose top is one rank above the run's foot when m - 1 spaces can hold the units
         * above the last (run_moves): one move, where one unit at a time would first fill a
         * space (a poorer position) and need the DEAL-less stage to come back. */
        int n = s->n[i], k = n ? unit_length(s, i) : 0;
        for (int m = 2; n && m <= nspaces + 1 && n - k > s->down[i]; m++) {
            int foot = s->card[i][n - k], below = s->card[i][n - k - 1];
            if (rank_of(below) != rank_of(foot) + 1)
                break;
            k++;
            while (n - k > s->down[i] && s->card[i][n - k - 1] == s->card[i][n - k] + 1 && rank_of(s->card[i][n - k]) != 13)
                k++;
            int low = s->card[i][n - k];
            for (int j = 0; j < NPILES; j++)
                if (j != i && s->n[j] && rank_of(s->card[j][s->n[j] - 1]) == rank_of(low) + 1 && nt < MAXMOVES) {
                    tmp[nt] = (SMove){(int8_t)i, (uint8_t)j, (int8_t)-k};
                    cls_of[nt++] = P_FREE;
                }
        }
    }
    if (has_stock && nspaces == 0 && !c->staged && nt < MAXMOVES) {
        tmp[nt] = (SMove){-1, 0, 0};
        cls_of[nt++] = P_DEAL;
    }
    int k = 0;
    for (int cls = 0; cls < NCLASSES; cls++)
        for (int q = 0; q < nt; q++)
            if (cls_of[q] == cls)
                out[k++] = tmp[q];
    return k;
}

static inline void turn_up(SState *s, int i)
{
    if (s->n[i] > 0 && s->down[i] >= s->n[i])
        s->down[i] = (uint8_t)(s->n[i] - 1);
}

/* A full suit, K deepest and A on top, on top of pile j leaves it; the card under turns up. */
static void lift_off(SState *s, int j)
{
    int n = s->n[j];
    if (n - s->down[j] < SUITLEN)
        return;
    int ace = s->card[j][n - 1];
    if (rank_of(ace) != 1)
        return;
    for (int k = 1; k < SUITLEN; k++)
        if (s->card[j][n - 1 - k] != ace + k)
            return;
    s->n[j] = (uint8_t)(n - SUITLEN);
    s->found++;
    turn_up(s, j);
}

static void apply(const Ctx *c, SState *s, const SMove *mv)
{
    if (mv->src < 0) {
        int n = c->slen - s->sp < NPILES ? c->slen - s->sp : NPILES;
        for (int j = 0; j < n; j++)
            s->card[j][s->n[j]++] = c->stock[s->sp + j];
        s->sp = (uint8_t)(s->sp + n);
        for (int j = 0; j < n; j++)
            lift_off(s, j);
        return;
    }
    int src = mv->src, dst = mv->dst, count = abs(mv->count);
    memcpy(&s->card[dst][s->n[dst]], &s->card[src][s->n[src] - count], (size_t)count);
    s->n[dst] = (uint8_t)(s->n[dst] + count);
    s->n[src] = (uint8_t)(s->n[src] - count);
    turn_up(s, src);
    lift_off(s, dst);
}

/* A move past the room of a pile (MAXPILE) is not searched: only hand-made positions come near. */
static int fits(const Ctx *c, const SState *s, const SMove *mv)
{
    if (mv->src < 0) {
        for (int j = 0; j < NPILES; j++)
            if (s->n[j] >= MAXPILE)
                return 0;
        return 1;
    }
    return s->n[mv->dst] + abs(mv->count) <= MAXPILE;
}

static int is_won(const Ctx *c, const SState *s)
{
    if (s->sp < c->slen)
        return 0;
    for (int i = 0; i < NPILES; i++)
        if (s->n[i])
            return 0;
    return 1;
}

/* One more position made: 1 when the budget, the clock or the stop flag ends the pass. */
static int count_node(Ctx *c)
{
    c->nodes++;
    if (c->max_nodes && c->nodes > c->max_nodes)
        return 1;
    if ((c->nodes & 1023) == 0 &&
        ((c->stop != NULL && *c->stop) || (c->deadline > 0 && now_seconds() > c->deadline))) {
        c->stopped = 1;
        return 1;
    }
    return 0;
}

/* How far play got in a position: cards in the suits lifted off plus cards turned up since the
 * root. The sampled Hint scores a world its search left undecided by the best of these (as
 * Klondike's progress_of); the search itself never reads it. */
static void note_progress(Ctx *c, const SState *s)
{
    int p = SUITLEN * s->found + c->root_down;
    for (int i = 0; i < NPILES; i++)
        p -= s->down[i];
    if (p > c->best)
        c->best = p;
}

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

/* One beam of `width` unless a pass has won, the budget is spent or memory ran out. */
static void run_beam(Ctx *c, const SState *root, int width, uint64_t max_nodes, int *r, int *ok)
{
    if (!next_pass(c, max_nodes, *r, ok))
        return;
    *r = beam(c, root, width);
    if (*r < 0)
        *ok = 0;
}

/* ---- the staged pass ---- */

/* Four suits (and two): the beams DEAL the whole stock early and die with cards face down. The staged
 * pass searches each stage (the positions between two DEALs) on its own, best first by the
 * stage worth over the quick pass's moves and runs through spaces, without the DEAL, at most
 * `stage_nodes` positions made; then from the setting's number of best positions of the stage
 * that may DEAL (no space), best first, it DEALs and searches the next stage, backing up to the
 * next of them when a later stage finds no win. It only reports a win. */
#define STAGE_LAST_NODES 1280000 /* a stage's positions: the setting's first size, 4 times more, ... up to this */
#define MAX_STAGE_BRANCH 4
#define MAX_STAGE_SETTINGS 8

/* One setting of the staged pass: the first stages' size (then 4 times more, ... while the pass
 * ends without a win), how many positions a stage DEALs from, how many piles each of them must
 * differ in from those taken before it (0: the best, whatever they are), and the positions the
 * setting may make (0: the rest of the budget). The settings run in turn, each from scratch
 * (docs/solver.md, "Settings in turn"): which deals win moves a lot between settings, and the
 * kept three win 20 of four-suit seeds 0-49 with 3 M positions each, each alone 13-14. The
 * first keeps 3 M (a budget up to 3 M searches as before): its wins come anywhere in them, and
 * a 1 M / 2 M split won 16 of seeds 0-49 but 10 of 100000-100049 against 11. */
typedef struct {
    int first_nodes, branch, spread;
    uint64_t nodes;
} StageSetting;

static const StageSetting STAGE_SETTINGS[] = {{20000, 2, 0, 3000000}, {10000, 2, 3, 3000000}, {20000, 3, 0, 0}};

/* A stage position's heap key (_ccommon.h's heap pops the least first): the higher worth first,
 * then the one made first (so C and Python, with heapq on (-worth, index), agree). */
static uint64_t stage_key(int worth, int32_t at)
{
    return ((uint64_t)((int64_t)INT32_MAX - worth) << 32) | (uint32_t)at;
}

/* A stage's position packed: the piles one after another (a deal holds 104 cards). */
typedef struct {
    uint8_t card[MAXSTOCK];
    uint8_t n[NPILES], down[NPILES];
    uint8_t sp, found;
} Packed;

static int pack(const SState *s, Packed *p)
{
    int k = 0;
    for (int i = 0; i < NPILES; i++) {
        if (k + s->n[i] > MAXSTOCK)
            return 0;
        memcpy(&p->card[k], s->card[i], s->n[i]);
        k += s->n[i];
        p->n[i] = s->n[i];
        p->down[i] = s->down[i];
    }
    p->sp = s->sp;
    p->found = s->found;
    return 1;
}

static void unpack(const Packed *p, SState *s)
{
    int k = 0;
    for (int i = 0; i < NPILES; i++) {
        memcpy(s->card[i], &p->card[k], p->n[i]);
        k += p->n[i];
        s->n[i] = p->n[i];
        s->down[i] = p->down[i];
    }
    s->sp = p->sp;
    s->found = p->found;
}

/* The moves from a stage's root to its position `at`, written from c->path[c->depth]; their
 * number, or -1 when they would reach MAXDEPTH. */
static int stage_line(Ctx *c, const int32_t *parent, const SMove *mv, int32_t at)
{
    int len = 0;
    for (int32_t q = at; parent[q] >= 0; q = parent[q])
        len++;
    if (c->depth + len >= MAXDEPTH)
        return -1;
    for (int32_t q = at, d = len; parent[q] >= 0; q = parent[q])
        c->path[c->depth + --d] = mv[q];
    return len;
}

typedef struct {
    SState s;
    int len; /* moves from the stage's root */
    SMove line[MAXDEPTH];
} StageLeaf;

/* Whether position p differs from each of the leaves in at least `spread` piles (cards or
 * face-down count). One move changes two piles, so a spread of 3 keeps a stage from DEALing
 * from two positions one move apart. */
static int spread_from(const Packed *p, const StageLeaf *leaves, int nleaves, int spread)
{
    for (int k = 0; k < nleaves; k++) {
        const SState *s = &leaves[k].s;
        int differ = 0;
        for (int i = 0, at = 0; i < NPILES; at += p->n[i++])
            differ += p->n[i] != s->n[i] || p->down[i] != s->down[i] || memcmp(&p->card[at], s->card[i], p->n[i]) != 0;
        if (differ < spread)
            return 0;
    }
    return 1;
}

/* The stage from `root` (in the table already), then the stages after the DEALs from its best
 * positions: R_WIN with the line in c->path[0..c->depth), R_DEAD, R_STOP, or -1 out of memory. */
static int stage(Ctx *c, const SState *root, int stage_nodes)
{
    int r = R_DEAD, np = 1, nleaves = 0, made = 0;
    size_t nh = 0;
    size_t cap = (size_t)stage_nodes + 1;
    Packed *pool = (Packed *)malloc(cap * sizeof(Packed));
    int32_t *parent = (int32_t *)malloc(cap * sizeof(int32_t));
    int *worths = (int *)malloc(cap * sizeof(int));
    SMove *mv = (SMove *)malloc(cap * sizeof(SMove));
    HeapItem *heap = (HeapItem *)malloc(cap * sizeof(HeapItem));
    StageLeaf *leaves = (StageLeaf *)malloc(MAX_STAGE_BRANCH * sizeof(StageLeaf));
    SState cur, t;
    SMove moves[MAXMOVES];
    uint64_t a, b;
    if (pool == NULL || parent == NULL || worths == NULL || mv == NULL || heap == NULL || leaves == NULL) {
        r = -1;
        goto done;
    }
    if (!pack(root, &pool[0]))
        goto done; /* more than a deal's cards: only hand-made positions */
    parent[0] = -1;
    worths[0] = worth(root, &STAGE_WEIGHTS);
    heap_push(heap, &nh, (HeapItem){stage_key(worths[0], 0), 0});
    while (nh > 0 && made < stage_nodes) {
        HeapItem it = heap_pop(heap, &nh);
        unpack(&pool[it.idx], &cur);
        int nm = gen_moves(c, &cur, moves);
        for (int q = 0; q < nm && made < stage_nodes; q++) {
            if (!fits(c, &cur, &moves[q]))
                continue;
            if (count_node(c)) {
                r = R_STOP;
                goto done;
            }
            made++;
            t = cur;
            apply(c, &t, &moves[q]);
            note_progress(c, &t);
            if (is_won(c, &t)) {
                int len = stage_line(c, parent, mv, it.idx);
                if (len < 0)
                    continue;
                c->depth += len;
                c->path[c->depth++] = moves[q];
                r = R_WIN;
                goto done;
            }
            key_of(c, &t, &a, &b);
            if (ks_has(&c->seen, a, b) || !pack(&t, &pool[np]))
                continue;
            ks_add(&c->seen, a, b);
            parent[np] = it.idx;
            mv[np] = moves[q];
            worths[np] = worth(&t, &STAGE_WEIGHTS);
            heap_push(heap, &nh, (HeapItem){stage_key(worths[np], np), (uint32_t)np});
            np++;
        }
    }
    /* The c->stage_branch best positions that may DEAL (stock left, no space), best first; with
     * a spread, each the best that differs from those taken before in that many piles, if any. */
    while (root->sp < c->slen && nleaves < c->stage_branch) {
        int32_t best = -1, apart = -1; /* apart: the best of those that differ enough */
        for (int32_t q = 0; q < np; q++) {
            int space = 0;
            for (int i = 0; i < NPILES; i++)
                space |= pool[q].n[i] == 0;
            if (space || worths[q] == INT_MIN)
                continue;
            if (best < 0 || worths[q] > worths[best])
                best = q;
            if ((apart < 0 || worths[q] > worths[apart]) && spread_from(&pool[q], leaves, nleaves, c->stage_spread))
                apart = q;
        }
        if (apart >= 0)
            best = apart;
        if (best < 0)
            break;
        worths[best] = INT_MIN; /* taken */
        int len = stage_line(c, parent, mv, best);
        if (len < 0)
            continue;
        StageLeaf *leaf = &leaves[nleaves++];
        unpack(&pool[best], &leaf->s);
        leaf->len = len;
        memcpy(leaf->line, &c->path[c->depth], (size_t)len * sizeof(SMove));
    }
    free(pool);
    free(parent);
    free(worths);
    free(mv);
    free(heap);
    pool = NULL, parent = NULL, worths = NULL, mv = NULL, heap = NULL;
    for (int k = 0; k < nleaves; k++) {
        const StageLeaf *leaf = &leaves[k];
        const SMove deal = {-1, 0, 0};
        int depth0 = c->depth;
        if (!fits(c, &leaf->s, &deal))
            continue;
        memcpy(&c->path[depth0], leaf->line, (size_t)leaf->len * sizeof(SMove));
        c->depth += leaf->len;
        c->path[c->depth++] = deal;
        if (count_node(c)) {
            r = R_STOP;
            goto done;
        }
        t = leaf->s;
        apply(c, &t, &deal);
        note_progress(c, &t);
        if (is_won(c, &t)) {
            r = R_WIN;
            goto done;
        }
        key_of(c, &t, &a, &b);
        if (!ks_has(&c->seen, a, b)) {
            ks_add(&c->seen, a, b);
            r = stage(c, &t, stage_nodes);
            if (r != R_DEAD)
                goto done;
        }
        c->depth = depth0;
    }
done:
    free(pool);
    free(parent);
    free(worths);
    free(mv);
    free(heap);
    free(leaves);
    return r;
}

/* The staged pass of `stage_nodes` a stage unless a pass has won, the budget is spent or memory
 * ran out. */
static void run_stages(Ctx *c, const SState *root, int stage_nodes, uint64_t max_nodes, int *r, int *ok)
{
    if (!next_pass(c, max_nodes, *r, ok))
        return;
    uint64_t a, b;
    key_of(c, root, &a, &b);
    ks_add(&c->seen, a, b);
    c->depth = 0;
    c->staged = 1;
    *r = stage(c, root, stage_nodes);
    c->staged = 0;
    if (*r < 0)
        *ok = 0;
}

/* ---- Python entry ---- */

static int read_position(PyObject *piles, PyObject *downs, int found, PyObject *stock, Ctx *c, SState *s)
{
    memset(s, 0, sizeof *s);
    if (!PyList_Check(piles) || !PyList_Check(downs) || !PyBytes_Check(stock)) {
        PyErr_SetString(PyExc_TypeError, "piles: list of bytes, downs: list of int, stock: bytes");
        return 0;
    }
    if (PyList_GET_SIZE(piles) != NPILES || PyList_GET_SIZE(downs) != NPILES || found < 0 || found > 8) {
        PyErr_SetString(PyExc_ValueError, "10 piles, one face-down count a pile, 0..8 suits lifted");
        return 0;
    }
    for (Py_ssize_t i = 0; i < NPILES; i++) {
        if (!read_pile(PyList_GET_ITEM(piles, i), PyList_GET_ITEM(downs, i), MAXPILE, s->card[i], &s->n[i],
                       &s->down[i]) ||
            !cards_valid(s->card[i], s->n[i]))
            return 0;
        turn_up(s, (int)i);
    }
    if (PyBytes_GET_SIZE(stock) > MAXSTOCK) {
        PyErr_SetString(PyExc_ValueError, "the stock holds at most 104 cards");
        return 0;
    }
    c->slen = (int)PyBytes_GET_SIZE(stock);
    memcpy(c->stock, PyBytes_AS_STRING(stock), (size_t)c->slen);
    if (!cards_valid(c->stock, c->slen))
        return 0;
    s->found = (uint8_t)found;
    return 1;
}

/* How many suits the cards of the deal (piles and stock) are of. One: the quick pass wins such
 * deals in a few thousand positions, so the narrow beams (~100,000) go after it, not before.
 * Two or four: the staged pass goes first and gets the budget (none of the other passes won one of
 * 100 four-suit deals at 3 M positions; on two suits it alone won 98 of 100, they 60). */
static int suits_in_deal(const Ctx *c, const SState *s)
{
    int seen[4] = {0, 0, 0, 0};
    for (int i = 0; i < NPILES; i++)
        for (int j = 0; j < s->n[i]; j++)
            seen[s->card[i][j] / 13] = 1;
    for (int j = 0; j < c->slen; j++)
        seen[c->stock[j] / 13] = 1;
    return seen[0] + seen[1] + seen[2] + seen[3];
}

/* The primitive moves of a run moved by way of the spaces (mv->count < 0) from `s`: each unit
 * above the lowest into a space of its own (the top one first), the lowest onto mv->dst, then
 * the others back onto it from their spaces (the last put aside first). Their number. */
static int run_moves(const SState *s, const SMove *mv, SMove *out)
{
    int i = mv->src, n = s->n[i], k = -mv->count, units[NPILES + 1], m = 0, no = 0, spaces[NPILES], ns = 0;
    for (int top = 0; top < k; m++) {
        int u = 1;
        while (top + u < k && s->card[i][n - top - u - 1] == s->card[i][n - top - u] + 1 &&
               rank_of(s->card[i][n - top - u]) != 13)
            u++;
        units[m] = u;
        top += u;
    }
    for (int j = 0; j < NPILES; j++)
        if (s->n[j] == 0)
            spaces[ns++] = j;
    for (int q = 0; q < m - 1; q++)
        out[no++] = (SMove){(int8_t)i, (uint8_t)spaces[q], (int8_t)units[q]};
    out[no++] = (SMove){(int8_t)i, mv->dst, (int8_t)units[m - 1]};
    for (int q = m - 2; q >= 0; q--)
        out[no++] = (SMove){(int8_t)spaces[q], mv->dst, (int8_t)units[q]};
    return no;
}

/* The `stages` argument: a sequence of (first_nodes, branch, spread, nodes) settings. */
static int read_settings(PyObject *obj, StageSetting *settings, int *n)
{
    PyObject *seq = PySequence_Fast(obj, "stages: a sequence of (first_nodes, branch, spread, nodes)");
    if (seq == NULL)
        return 0;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int ok = len <= MAX_STAGE_SETTINGS;
    for (Py_ssize_t k = 0; ok && k < len; k++) {
        StageSetting *set = &settings[k];
        unsigned long long nodes;
        ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "iiiK", &set->first_nodes, &set->branch, &set->spread,
                              &nodes) &&
             set->first_nodes > 0 && set->branch >= 1 && set->branch <= MAX_STAGE_BRANCH && set->spread >= 0;
        set->nodes = nodes;
    }
    Py_DECREF(seq);
    if (!ok && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "at most 8 stage settings, first_nodes > 0, branch 1..4, spread >= 0");
    *n = (int)len;
    return ok;
}

/* Append a move as the caller's (src_zone, src, dst_zone, dst, count); 0 on a Python error. */
static int append_move(PyObject *moves, const SMove *mv)
{
    if (mv->src < 0)
        return push_move(moves, Z_STOCK, 0, Z_TAB, 0, 0);
    return push_move(moves, Z_TAB, mv->src, Z_TAB, mv->dst, mv->count);
}

static PyObject *py_spider_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"piles",       "downs", "found", "stock", "max_nodes", "max_seconds",
                             "stop",        "quick_nodes", "stages", "progress", NULL};
    PyObject *piles, *downs, *stock, *stop_obj = NULL, *stages_obj = NULL, *progress_obj = NULL;
    int found;
    /* quick_nodes: the quick pass's size, so that a test reaches the beams within a small budget */
    unsigned long long max_nodes = 0, quick_nodes = QUICK_NODES;
    /* stages: the staged pass's settings in turn (tests: a staged win sooner; measuring them) */
    StageSetting settings[MAX_STAGE_SETTINGS];
    int nsettings = (int)(sizeof STAGE_SETTINGS / sizeof STAGE_SETTINGS[0]);
    double max_seconds = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOiO|KdOKOO", kwlist, &piles, &downs, &found, &stock,
                                     &max_nodes, &max_seconds, &stop_obj, &quick_nodes, &stages_obj,
                                     &progress_obj))
        return NULL;
    memcpy(settings, STAGE_SETTINGS, sizeof STAGE_SETTINGS);
    if (stages_obj != NULL && !read_settings(stages_obj, settings, &nsettings))
        return NULL;
    Ctx *c = (Ctx *)calloc(1, sizeof(Ctx));
    if (c == NULL)
        return PyErr_NoMemory();
    if (!read_position(piles, downs, found, stock, c, &c->st[0])) {
        free(c);
        return NULL;
    }
    SState root = c->st[0];
    for (int i = 0; i < NPILES; i++)
        c->root_down += root.down[i];
    Py_buffer stop_view, progress_view;
    if (!open_search_progress(&c->seen, (size_t)1 << 14, MAX_SLOTS, 0, stop_obj, &stop_view, &c->stop, progress_obj,
                              &progress_view)) {
        free(c);
        return NULL;
    }
    int r, ok = 1, full_done = 0; /* full_done: the full search ran to its end (a LOST, unless truncated) */
    Py_BEGIN_ALLOW_THREADS
    c->deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    /* For two or four suits the staged pass (it may report a win only), then the narrow beams, the
     * quick pass (cuts that may lose wins), the wider beams (likewise:
     * they may report a win only), then from scratch the full search, whose failure alone is
     * a LOST. Every pass starts from the root with a fresh table. */
    c->quick = 1;
    c->max_nodes = max_nodes;
    r = R_DEAD;
    int suits = suits_in_deal(c, &root), narrow_first = suits > 1;
    for (int k = 0; suits > 1 && k < nsettings; k++) {
        /* Each setting from scratch within its share; one whose share ran out leaves the rest of
         * the budget to the next. */
        const StageSetting *set = &settings[k];
        uint64_t end = set->nodes ? c->nodes + set->nodes : 0;
        c->max_nodes = end && (max_nodes == 0 || end < max_nodes) ? end : max_nodes;
        c->stage_branch = set->branch;
        c->stage_spread = set->spread;
        for (int n = set->first_nodes; n <= STAGE_LAST_NODES; n *= 4)
            run_stages(c, &root, n, c->max_nodes, &r, &ok);
        if (r == R_STOP && !c->stopped && (max_nodes == 0 || c->nodes < max_nodes))
            r = R_DEAD;
        c->max_nodes = max_nodes;
    }
    for (int w = BEAM_FIRST_WIDTH; narrow_first && w <= BEAM_NARROW_WIDTH; w *= 2)
        run_beam(c, &root, w, max_nodes, &r, &ok);
    if (ok && r != R_WIN && !c->stopped && (max_nodes == 0 || c->nodes < max_nodes)) {
        ok = ks_reset(&c->seen);
        uint64_t quick_end = c->nodes + quick_nodes;
        c->max_nodes = max_nodes && max_nodes < quick_end ? max_nodes : quick_end;
        c->depth = 0;
        c->st[0] = root;
        if (ok)
            r = dfs(c);
        c->max_nodes = max_nodes;
    }
    for (int w = narrow_first ? BEAM_NARROW_WIDTH * 2 : BEAM_FIRST_WIDTH; w <= BEAM_LAST_WIDTH; w *= 2)
        run_beam(c, &root, w, max_nodes, &r, &ok);
    if (ok && r != R_WIN && !c->stopped && (max_nodes == 0 || c->nodes < max_nodes)) {
        ok = ks_reset(&c->seen);
        c->quick = 0;
        c->depth = 0;
        c->truncated = 0;
        c->max_nodes = max_nodes;
        c->st[0] = root;
        if (ok) {
            r = dfs(c);
            full_done = r == R_DEAD;
        }
    }
    Py_END_ALLOW_THREADS
    close_search_progress(&c->seen, &stop_view, &progress_view, c->best);
    int outcome = search_outcome(r == R_WIN, !full_done || c->truncated);
    PyObject *moves = line_list(ok);
    SState at = root; /* replayed along the line: a run through spaces is told as its moves */
    for (int q = 0; moves != NULL && outcome == OUT_WON && q < c->depth; q++) {
        const SMove *mv = &c->path[q];
        SMove parts[2 * NPILES + 1];
        int nparts = 1;
        if (mv->count < 0)
            nparts = run_moves(&at, mv, parts);
        else
            parts[0] = *mv;
        for (int k = 0; moves != NULL && k < nparts; k++)
            if (!append_move(moves, &parts[k]))
                Py_CLEAR(moves);
        apply(c, &at, mv);
    }
    PyObject *res = solve_result(outcome, moves, c->nodes);
    free(c);
    return res;
}

static PyMethodDef methods[] = {
    {"spider_solve", (PyCFunction)(void (*)(void))py_spider_solve, METH_VARARGS | METH_KEYWORDS,
     "spider_solve(piles, downs, found, stock, max_nodes=0, max_seconds=0, stop=None, "
     "quick_nodes=1000000, stages=None, progress=None) -> "
     "(outcome, [(src_zone, src, dst_zone, dst, count)], nodes); progress, a writable byte, gets the most "
     "progress of a position searched (13 a suit lifted off, 1 a card turned up)"},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__cspider(void)
{
    uint64_t seed = 0x737069646572ULL;
    for (int w = 0; w < 2; w++) {
        ZOBRIST_FILL(ZDOWN[w], &seed);
        ZOBRIST_FILL(ZP[w], &seed);
        ZOBRIST_FILL(ZIDX[w], &seed);
        ZOBRIST_FILL(ZS[w], &seed);
    }
    return create_core_module("_cspider",
                              "The compiled Spider search of accordion.solver (spider/README.md).",
                              methods);
}
