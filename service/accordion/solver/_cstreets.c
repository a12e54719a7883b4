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
 *   - every pile descending bottom to top is a win (the lowest top always goes up next).
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

#define OUT_UNKNOWN 0
#define OUT_WON 1
#define OUT_LOST 2

#define R_DEAD 0
#define R_WIN 1
#define R_STOP 2

enum { BUILD_ANY_SUIT = 0, BUILD_ALTERNATE = 1, BUILD_SAME_SUIT = 2 };

typedef struct {
    uint8_t src, dst; /* dst TO_FOUND: the card's foundation */
} SMove;

typedef struct {
    int npiles, space_any;
    uint8_t card[MAXP][MAXPILE];
    uint8_t n[MAXP];
    uint8_t found[4];
    uint64_t ph[2][MAXP]; /* each pile's Zobrist sum, kept as cards come and go */
    int rises;            /* cards sitting on a card of their rank or lower: 0 is a win */
    uint8_t builds[52][52]; /* builds[x][h]: card x goes on card h */
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
} Ctx;

/* One position on the current line: its moves, the next to try, the card the last one moved. */
typedef struct Frame {
    SMove moves[MAXMOVES];
    int nm, next, card;
} Frame;

static uint64_t ZP[2][MAXPILE][52];

/* rank and suit by table: they are read for every card of every pile at each expansion */
static const uint8_t RANK_OF[52] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
static const uint8_t SUIT_OF[52] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
static inline int rank_of(int c) { return RANK_OF[c]; }
static inline int suit_of(int c) { return SUIT_OF[c]; }
static inline int red_suit(int s) { return s == 1 || s == 2; }

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

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
        if (!c->builds[y][x] || c->found[t] >= r - 1)
            continue;
        if (c->found[t] < r - 2)
            return 0;
        for (int u = 0; u < 4; u++)
            if (c->builds[u * 13 + r - 3][y] && c->found[u] < r - 2)
                return 0;
    }
    return 1;
}

/* Every pile descending from bottom to top: the lowest top is then the lowest card of its
 * suit left, so it goes up, and the piles stay descending: a win. */
static inline int is_won(const Ctx *c) { return c->rises == 0; }

static void key_of(const Ctx *c, uint64_t *a, uint64_t *b)
{
    uint64_t h[2] = {0, 0};
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < c->npiles; i++)
            h[w] += mix64(c->ph[w][i] + (uint64_t)w);
    *a = h[0];
    *b = h[1] | 1; /* never the empty slot */
}

static inline void push_card(Ctx *c, int i, int x)
{
    int j = c->n[i]++;
    c->card[i][j] = (uint8_t)x;
    if (j && rank_of(x) >= rank_of(c->card[i][j - 1]))
        c->rises++;
    c->ph[0][i] += ZP[0][j][x];
    c->ph[1][i] += ZP[1][j][x];
}

static inline int pop_card(Ctx *c, int i)
{
    int j = --c->n[i], x = c->card[i][j];
    if (j && rank_of(x) >= rank_of(c->card[i][j - 1]))
        c->rises--;
    c->ph[0][i] -= ZP[0][j][x];
    c->ph[1][i] -= ZP[1][j][x];
    return x;
}

static void do_move(Ctx *c, SMove mv)
{
    int x = pop_card(c, mv.src);
    if (mv.dst == TO_FOUND)
        c->found[suit_of(x)]++;
    else
        push_card(c, mv.dst, x);
}

/* Take back move mv, which moved card x. */
static void undo_move(Ctx *c, SMove mv, int x)
{
    if (mv.dst == TO_FOUND)
        c->found[suit_of(x)]--;
    else
        pop_card(c, mv.dst);
    push_card(c, mv.src, x);
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
static inline int priority(const Ctx *c, int i, int t, const int *gap, const int *deep, int to_space)
{
    if (c->n[i] >= 2 && on_found(c, c->card[i][c->n[i] - 2]))
        return 0;
    if (c->n[i] == 1)
        return 1;
    int p = 2 + 16 * (gap[i] < 7 ? gap[i] : 7) + (deep[i] < 15 ? deep[i] : 15);
    if (rank_of(c->card[i][c->n[i] - 2]) == rank_of(top(c, i)) + 1)
        p += 8;
    if (!to_space && gap[t] <= 2)
        p += 4;
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
    for (int i = 0; i < c->npiles; i++)
        gap[i] = pile_gap(c, i, &deep[i]);
    for (int i = 0; i < c->npiles; i++) {
        if (c->n[i] == 0)
            continue;
        int x = top(c, i);
        if (x == last)
            continue;
        for (int t = 0; t < c->npiles; t++)
            if (t != i && c->n[t] && c->builds[x][top(c, t)] && k < MAXMOVES) {
                prio[k] = priority(c, i, t, gap, deep, 0) + noise(c);
                m[k].src = (uint8_t)i;
                m[k++].dst = (uint8_t)t;
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
    if (ks_has(&c->seen, a, b))
        return R_DEAD;
    ks_add(&c->seen, a, b);
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
    f->nm = gen_moves(c, f->moves, c->depth ? c->frames[c->depth - 1].card : -1);
    f->next = 0;
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
            undo_move(c, f->moves[f->next - 1], f->card);
        if (f->next == f->nm) {
            if (c->depth == 0)
                return R_DEAD;
            c->depth--;
            continue;
        }
        SMove mv = f->moves[f->next++];
        f->card = top(c, mv.src);
        do_move(c, mv);
        c->depth++;
        r = enter(c);
        if (r == R_WIN || r == R_STOP)
            return r;
        if (r == R_DEAD)
            c->depth--;
    }
}

/* ---- the win as moves: (dst_zone 0 tableau / 1 foundation, src, dst) ---- */

static int push(PyObject *out, int zone, int src, int dst)
{
    PyObject *t = Py_BuildValue("(iii)", zone, src, dst);
    if (t == NULL)
        return 0;
    int ok = PyList_Append(out, t) == 0;
    Py_DECREF(t);
    return ok;
}

static int expand(Ctx *c, PyObject *out)
{
    for (int q = 0; q < c->depth; q++) {
        SMove mv = c->frames[q].moves[c->frames[q].next - 1];
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
        for (Py_ssize_t j = 0; j < PyBytes_GET_SIZE(p); j++) {
            if (cards[j] >= 52) {
                PyErr_SetString(PyExc_ValueError, "a card is 0..51");
                return 0;
            }
            push_card(c, (int)i, cards[j]);
        }
    }
    for (int t = 0; t < 4; t++) {
        long f = PyLong_AsLong(PyList_GET_ITEM(found, t));
        if (f < 0 || f > 13) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a foundation holds 0..13 cards");
            return 0;
        }
        c->found[t] = (uint8_t)f;
    }
    return 1;
}

static PyObject *py_streets_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"piles", "found", "build", "space_any", "max_nodes", "max_seconds", "stop", NULL};
    PyObject *piles, *found, *stop_obj = NULL;
    int build, space_any;
    unsigned long long max_nodes = 0;
    double max_seconds = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOip|KdO", kwlist, &piles, &found, &build, &space_any,
                                     &max_nodes, &max_seconds, &stop_obj))
        return NULL;
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
            c->builds[x][h] = (uint8_t)builds_on(build, x, h);
    c->space_any = space_any;
    c->max_nodes = max_nodes;
    if (!ks_init(&c->seen, (size_t)1 << 14, MAX_SLOTS)) {
        free(c);
        return PyErr_NoMemory();
    }
    Py_buffer stop_view;
    if (!get_stop(stop_obj, &stop_view, &c->stop)) {
        ks_free(&c->seen);
        free(c);
        return NULL;
    }
    uint8_t root_card[MAXP][MAXPILE], root_n[MAXP], root_found[4];
    uint64_t root_ph[2][MAXP];
    int root_rises = c->rises;
    memcpy(root_card, c->card, sizeof root_card);
    memcpy(root_n, c->n, sizeof root_n);
    memcpy(root_found, c->found, sizeof root_found);
    memcpy(root_ph, c->ph, sizeof root_ph);
    int r, ok = 1;
    c->attempt_nodes = FIRST_ATTEMPT;
    Py_BEGIN_ALLOW_THREADS
    c->start = now_seconds();
    c->deadline = max_seconds > 0 ? c->start + max_seconds : 0;
    /* Restarts: attempt a visits at most FIRST_ATTEMPT * 2^a positions, its table fresh, the
     * moves of equal rank after the first attempt in an order shuffled by noise seeded by a.
     * A win is a win; an attempt that ends without reaching its limit (or the depth cut) has
     * searched everything reachable, so its LOST is a proof whatever the order. The attempt
     * that could not be followed by a whole one runs to the end of the budget (last_attempt). */
    for (;;) {
        c->attempt_end = c->nodes + c->attempt_nodes;
        c->rng = (uint64_t)c->attempt;
        r = dfs(c);
        if (r != R_STOP || c->stopped || (c->max_nodes && c->nodes > c->max_nodes))
            break;
        memcpy(c->card, root_card, sizeof root_card); /* back to the root, table emptied */
        memcpy(c->n, root_n, sizeof root_n);
        memcpy(c->found, root_found, sizeof root_found);
        memcpy(c->ph, root_ph, sizeof root_ph);
        c->rises = root_rises;
        c->depth = 0;
        c->truncated = 0;
        c->attempt++;
        c->attempt_nodes *= 2;
        ks_free(&c->seen);
        if (!(ok = ks_init(&c->seen, (size_t)1 << 14, MAX_SLOTS)))
            break;
    }
    Py_END_ALLOW_THREADS
    release_stop(&stop_view);
    ks_free(&c->seen);
    if (!ok) {
        free(c->frames);
        free(c);
        return PyErr_NoMemory();
    }
    int outcome = r == R_WIN ? OUT_WON : (r == R_STOP || c->truncated) ? OUT_UNKNOWN : OUT_LOST;
    PyObject *moves = PyList_New(0);
    if (moves != NULL && outcome == OUT_WON) {
        memcpy(c->card, root_card, sizeof root_card);
        memcpy(c->n, root_n, sizeof root_n);
        memcpy(c->found, root_found, sizeof root_found);
        memcpy(c->ph, root_ph, sizeof root_ph);
        c->rises = root_rises;
        if (!expand(c, moves))
            Py_CLEAR(moves);
    }
    PyObject *res = moves == NULL ? NULL : Py_BuildValue("(iNK)", outcome, moves, (unsigned long long)c->nodes);
    free(c->frames);
    free(c);
    return res;
}

static PyMethodDef methods[] = {
    {"streets_solve", (PyCFunction)(void (*)(void))py_streets_solve, METH_VARARGS | METH_KEYWORDS,
     "streets_solve(piles, found, build, space_any, max_nodes=0, max_seconds=0, stop=None) -> "
     "(outcome, [(dst_zone, src, dst)], nodes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cstreets",
    "The compiled open-tableau search of accordion.solver; _pystreets.py is the same in Python.", -1, methods,
};

PyMODINIT_FUNC PyInit__cstreets(void)
{
    uint64_t seed = 0x73747265657473ULL;
    for (int w = 0; w < 2; w++)
        for (int j = 0; j < MAXPILE; j++)
            for (int x = 0; x < 52; x++)
                ZP[w][j][x] = splitmix(&seed);
    return PyModule_Create(&module);
}
