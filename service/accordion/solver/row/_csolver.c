/*
 * _csolver: the compiled core of accordion.solver (see docs/solver.md).
 *
 * Three searches, each a pure function of a row of cards, mirrored line for line by
 * the pure-Python path in _pysolver.py (same move order, same node counts, same
 * verdicts; the Python path keys its tables by exact tuples where this file uses
 * hashes, see below):
 *
 *   stack_solve    stacking games (Accordion and its peers): the state is the
 *                  sequence of pile tops; depth-first search with a dead-state table,
 *                  move ordering and restarts with growing node limits.
 *   elim_dp        the "inner" eliminators (1 or 2 cards leave from between a
 *                  matching pair): an exact interval dynamic programme, O(n^3).
 *   elim_solve     the other row games that discard (Concertina, Bayan, and the inner
 *                  rule for cross-checks): depth-first search over subsets of the row.
 *
 * Every search releases the GIL while it runs. Budgets: max_nodes (0 = none) and
 * max_seconds (<= 0 = none); the clock is read every 1024 nodes. A search also stops
 * (outcome unknown) when its caller sets the stop flag: ``stop``, a writable buffer
 * whose first byte another thread sets to nonzero (a cancelled call), read at the same
 * 1024-node checks. The buffer stays exported (pinned) for the whole search.
 */
#include "_ccommon.h"

#define NCARDS 52
#define MAXROW 128
/* The dead-state tables stop growing at 8 M slots (128 MB); past that they only forget work. */
#define MAX_TABLE_SLOTS ((size_t)1 << 23)

/* A subtree's results besides _ccommon.h's R_DEAD, R_WIN and R_STOP (the caller's budget: nodes,
 * time or the stop flag). */
#define R_ABORT 3 /* this attempt's node limit */

static uint8_t MATCH[NCARDS][NCARDS];

static uint64_t ZOBRIST[MAXROW][NCARDS];

/* ---- the budget and restart bookkeeping shared by the searches ---- */

typedef struct {
    uint64_t nodes;       /* every node of every attempt */
    uint64_t max_nodes;   /* 0: no limit */
    double deadline;      /* 0: no limit */
    volatile const uint8_t *stop; /* the caller's stop flag, or NULL */
    uint64_t anodes;      /* nodes of this attempt */
    uint64_t alimit;      /* this attempt's limit */
    int stopped;
    int noisy;            /* a restart: the move order is shaken by rng */
    uint64_t rng;         /* SplitMix64 state of the restart noise, seeded by the attempt's number */
} Budget;

/* Count a node; R_STOP / R_ABORT when a limit is passed, else -1. */
static inline int count_node(Budget *b)
{
    b->nodes++;
    b->anodes++;
    if (b->max_nodes && b->nodes > b->max_nodes) {
        b->stopped = 1;
        return R_STOP;
    }
    if ((b->nodes & 1023) == 0 &&
        ((b->stop != NULL && *b->stop) || (b->deadline > 0 && now_seconds() > b->deadline))) {
        b->stopped = 1;
        return R_STOP;
    }
    if (b->anodes > b->alimit)
        return R_ABORT;
    return -1;
}

/* =====================================================================
 * Stacking games
 * ===================================================================== */

typedef struct {
    int near, far, right, strict, win_piles, goal;
    Budget b;
    KeySet dead;
    int path_src[MAXROW], path_dst[MAXROW];
    int depth_won;
} SCtx;

typedef struct {
    int src, dst;
    int key;
} SMove;

/*
 * The legal STACKs of a row of tops, in the engine's order (by source; left-near,
 * right-near, left-far, right-far), which is also the tie order for the sort.
 */
static int stack_moves(const SCtx *c, const uint8_t *t, int n, SMove *out)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        const uint8_t *m = MATCH[t[i]];
        int ln = i - c->near >= 0 && m[t[i - c->near]];
        int rn = c->right && i + c->near < n && m[t[i + c->near]];
        if (ln) { out[k].src = i; out[k].dst = i - c->near; k++; }
        if (rn) { out[k].src = i; out[k].dst = i + c->near; k++; }
        if (c->strict && (ln || rn))
            continue;
        if (i - c->far >= 0 && m[t[i - c->far]]) { out[k].src = i; out[k].dst = i - c->far; k++; }
        if (c->right && i + c->far < n && m[t[i + c->far]]) { out[k].src = i; out[k].dst = i + c->far; k++; }
    }
    return k;
}

static inline void stack_apply(const uint8_t *t, int n, int src, int dst, uint8_t *out)
{
    int j = 0;
    for (int i = 0; i < n; i++) {
        if (i == src)
            continue;
        out[j++] = (i == dst) ? t[src] : t[i];
    }
}

/* Sort moves by key, stable (insertion sort: the lists are short). */
static void sort_moves(SMove *mv, int k)
{
    for (int i = 1; i < k; i++) {
        SMove x = mv[i];
        int j = i - 1;
        while (j >= 0 && mv[j].key > x.key) {
            mv[j + 1] = mv[j];
            j--;
        }
        mv[j + 1] = x;
    }
}

/*
 * Accordion's Revenge: the goal card g must stay on top to the end, so no pile may move
 * onto it. With piles moving only leftward, a pile right of g can pass g only by a leap
 * that lands left of it, onto a matching top there. So, when piles lie right of g (at
 * position p), the position is dead when
 *   - near is 1 and p < far - 1: the pile at p+1 could only land on g or before the
 *     row's start, and g itself can only move further left, which keeps p < far - 1;
 *   - no top right of g matches a top left of g: until the first crossing each side's
 *     tops are a subset of its tops now, so no crossing can ever start.
 */
static int goal_blocked(const SCtx *c, const uint8_t *t, int n)
{
    int p = 0;
    while (p < n && t[p] != c->goal)
        p++;
    if (p >= n - 1)
        return 0;
    if (c->near == 1 && p < c->far - 1)
        return 1;
    int lr[13] = {0}, ls[4] = {0};
    for (int i = 0; i < p; i++) {
        lr[t[i] % 13]++;
        ls[t[i] / 13]++;
    }
    for (int i = p + 1; i < n; i++) {
        if (lr[t[i] % 13] || ls[t[i] / 13])
            return 0;
    }
    return 1;
}

static int sdfs(SCtx *c, const uint8_t *t, int n, int depth)
{
    int r = count_node(&c->b);
    if (r >= 0)
        return r;
    if (n <= c->win_piles && (c->goal < 0 || (n == 1 && t[0] == c->goal))) {
        c->depth_won = depth;
        return R_WIN;
    }
    /* The key: the set of tops (exact) and a hash of their order. Bit 63 marks a used slot. */
    uint64_t set = 0, h = 0;
    int rc[13] = {0}, sc[4] = {0};
    for (int i = 0; i < n; i++) {
        set |= 1ULL << t[i];
        h ^= ZOBRIST[i][t[i]];
        rc[t[i] % 13]++;
        sc[t[i] / 13]++;
    }
    set |= 1ULL << 63;
    if (ks_has(&c->dead, set, h))
        return R_DEAD;
    /*
     * A top that shares rank and suit with no other top can neither move nor be covered:
     * it stays a pile of its own to the end, and the other piles can never join it.
     */
    int isolated = 0;
    for (int i = 0; i < n; i++)
        isolated += rc[t[i] % 13] == 1 && sc[t[i] / 13] == 1;
    if (isolated && isolated + (n > isolated) > c->win_piles) {
        ks_add(&c->dead, set, h);
        return R_DEAD;
    }
    if (c->goal >= 0 && !c->right && goal_blocked(c, t, n)) {
        ks_add(&c->dead, set, h);
        return R_DEAD;
    }
    SMove mv[4 * MAXROW];
    int k = stack_moves(c, t, n, mv);
    int kk = 0;
    for (int j = 0; j < k; j++) {
        uint8_t buried = t[mv[j].dst];
        if (c->goal >= 0 && buried == c->goal)
            continue; /* the goal must stay on top to end on top */
        /*
         * The order (see docs/solver.md): first bury the top with the fewest partners, a
         * partner of the same rank counting three times one of the same suit (rank partners
         * are scarcer: at most 3 against 12), since that top is the next to be isolated;
         * then move the top with the fewest partners (the same weights); then the long move
         * before the short one; then the engine's order.
         */
        uint8_t kept = t[mv[j].src];
        int bury = 3 * (rc[buried % 13] - 1) + (sc[buried / 13] - 1);
        int keep = 3 * (rc[kept % 13] - 1) + (sc[kept / 13] - 1);
        if (keep > 31)
            keep = 31;
        int near_move = abs(mv[j].src - mv[j].dst) == c->near;
        int key = ((bury * 32 + keep) * 2 + near_move) * 4096 + j;
        if (c->b.noisy)
            key = (int)(((unsigned)key & ~4095u) + (unsigned)(splitmix(&c->b.rng) & 4095));
        mv[kk] = mv[j];
        mv[kk].key = key;
        kk++;
    }
    sort_moves(mv, kk);
    uint8_t child[MAXROW];
    for (int j = 0; j < kk; j++) {
        stack_apply(t, n, mv[j].src, mv[j].dst, child);
        c->path_src[depth] = mv[j].src;
        c->path_dst[depth] = mv[j].dst;
        r = sdfs(c, child, n - 1, depth + 1);
        if (r != R_DEAD)
            return r;
    }
    ks_add(&c->dead, set, h);
    return R_DEAD;
}

/* The restart schedule shared with the Python path. */
#define FIRST_LIMIT 500ULL
static uint64_t next_limit(uint64_t limit) { return limit + limit / 32; }

/* A search's attempts from its root (a row of n): the first limited to FIRST_LIMIT positions
 * (without restarts, to none), each next one to next_limit of the one before, its move order
 * shaken by noise seeded by its number, until one ends other than at its limit (R_ABORT).
 * `attempt` searches once from the root; the last attempt's result. */
static int run_attempts(Budget *b, int restarts, int (*attempt)(void *c, const void *root, int n), void *c,
                        const void *root, int n)
{
    uint64_t limit = restarts ? FIRST_LIMIT : UINT64_MAX;
    for (int number = 0;; number++) {
        b->anodes = 0;
        b->alimit = limit;
        b->noisy = number > 0;
        b->rng = (uint64_t)number;
        int r = attempt(c, root, n);
        if (r != R_ABORT)
            return r;
        limit = next_limit(limit);
    }
}

static int stack_attempt(void *c, const void *tops, int n) { return sdfs((SCtx *)c, (const uint8_t *)tops, n, 0); }

static PyObject *py_stack_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tops", "near", "far", "right", "strict", "win_piles", "goal",
                             "max_nodes", "max_seconds", "restarts", "stop", NULL};
    Py_buffer buf;
    int near, far, right, strict, win_piles, goal, restarts = 1;
    unsigned long long max_nodes = 0;
    double max_seconds = 0;
    PyObject *stop_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*iippii|KdpO", kwlist, &buf, &near, &far, &right,
                                     &strict, &win_piles, &goal, &max_nodes, &max_seconds, &restarts,
                                     &stop_obj))
        return NULL;
    int n = (int)buf.len;
    if (n > MAXROW || n < 1) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "a row has 1 to 128 piles");
        return NULL;
    }
    uint8_t tops[MAXROW];
    memcpy(tops, buf.buf, (size_t)n);
    PyBuffer_Release(&buf);
    if (!cards_valid(tops, n))
        return NULL;
    SCtx *c = (SCtx *)calloc(1, sizeof(SCtx));
    if (c == NULL)
        return PyErr_NoMemory();
    c->near = near; c->far = far; c->right = right; c->strict = strict;
    c->win_piles = win_piles; c->goal = goal;
    c->b.max_nodes = max_nodes;
    Py_buffer stop_view;
    if (!open_search(&c->dead, 1 << 12, MAX_TABLE_SLOTS, 0, stop_obj, &stop_view, &c->b.stop)) {
        free(c);
        return NULL;
    }
    int r;
    Py_BEGIN_ALLOW_THREADS
    c->b.deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    r = run_attempts(&c->b, restarts, stack_attempt, c, tops, n);
    Py_END_ALLOW_THREADS
    close_search(&c->dead, &stop_view);
    PyObject *moves = PyList_New(0);
    for (int d = 0; moves != NULL && r == R_WIN && d < c->depth_won; d++)
        if (!append_new(moves, Py_BuildValue("(ii)", c->path_src[d], c->path_dst[d])))
            Py_CLEAR(moves);
    PyObject *res = solve_result(search_outcome(r == R_WIN, r != R_DEAD), moves, c->b.nodes);
    free(c);
    return res;
}

/* =====================================================================
 * Eliminators: the interval programme for the inner rules
 * ===================================================================== */

/*
 * W[a][b] (a < b, original positions): every card strictly between a and b can be
 * removed while a and b stay. The cards between only ever see neighbours inside
 * [a, b], so the interval is a game of its own; its last move takes the one or two
 * cards left between a and b, so a and b match and the pieces either side of those
 * cards are W intervals:
 *   W[a][a+1]  = 1
 *   W[a][b]    = MATCH(a, b) and (one and P[a][b]  or  two and some d: P[a][d] and W[d][b])
 *   P[a][d]    = some c in (a, d): W[a][c] and W[c][d]     (a, c, d left with c between)
 * The whole row is won iff W[0][n-1]: its ends never leave.
 */
typedef struct {
    int n;
    uint8_t W[MAXROW][MAXROW];
    uint8_t P[MAXROW][MAXROW];
    int16_t wc[MAXROW][MAXROW]; /* witness: the last move's first card (c), or -1 */
    int16_t wd[MAXROW][MAXROW]; /* the last move's second card, or -1 for a single */
    int16_t pc[MAXROW][MAXROW]; /* witness c of P */
} DP;

static PyObject *py_elim_dp(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"cards", "one", "two", "max_nodes", "max_seconds", "stop", NULL};
    Py_buffer buf;
    int one, two;
    unsigned long long max_nodes = 0;
    double max_seconds = 0;
    PyObject *stop_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*pp|KdO", kwlist, &buf, &one, &two, &max_nodes, &max_seconds,
                                     &stop_obj))
        return NULL;
    int n = (int)buf.len;
    if (n > MAXROW) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "a row has at most 128 cards");
        return NULL;
    }
    uint8_t t[MAXROW];
    memcpy(t, buf.buf, (size_t)n);
    PyBuffer_Release(&buf);
    if (!cards_valid(t, n))
        return NULL;
    if (n <= 2)
        return solve_result(OUT_WON, PyList_New(0), 1);
    DP *dp = (DP *)malloc(sizeof(DP));
    if (dp == NULL)
        return PyErr_NoMemory();
    Py_buffer stop_view;
    volatile const uint8_t *stop;
    if (!get_stop(stop_obj, &stop_view, &stop)) {
        free(dp);
        return NULL;
    }
    uint64_t nodes = 0;
    int stopped = 0;
    Py_BEGIN_ALLOW_THREADS
    double deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    for (int a = 0; a + 1 < n; a++) {
        dp->W[a][a + 1] = 1;
        dp->wc[a][a + 1] = -1;
        dp->P[a][a + 1] = 0;
    }
    for (int len = 2; len < n && !stopped; len++) {
        for (int a = 0; a + len < n; a++) {
            int b = a + len;
            nodes++;
            if ((max_nodes && nodes > max_nodes) ||
                ((nodes & 1023) == 0 &&
                 ((stop != NULL && *stop) || (deadline > 0 && now_seconds() > deadline)))) {
                stopped = 1;
                break;
            }
            int pcw = -1;
            for (int c = a + 1; c < b; c++) {
                if (dp->W[a][c] && dp->W[c][b]) { pcw = c; break; }
            }
            dp->P[a][b] = pcw >= 0;
            dp->pc[a][b] = (int16_t)pcw;
            int w = 0, wc = -1, wd = -1;
            if (MATCH[t[a]][t[b]]) {
                if (one && pcw >= 0) {
                    w = 1; wc = pcw; wd = -1;
                } else if (two) {
                    for (int d = a + 2; d < b; d++) {
                        if (dp->P[a][d] && dp->W[d][b]) { w = 1; wc = dp->pc[a][d]; wd = d; break; }
                    }
                }
            }
            dp->W[a][b] = (uint8_t)w;
            dp->wc[a][b] = (int16_t)wc;
            dp->wd[a][b] = (int16_t)wd;
        }
    }
    Py_END_ALLOW_THREADS
    release_stop(&stop_view);
    PyObject *res;
    if (stopped) {
        res = solve_result(OUT_UNKNOWN, PyList_New(0), nodes);
    } else if (!dp->W[0][n - 1]) {
        res = solve_result(OUT_LOST, PyList_New(0), nodes);
    } else {
        /* Replay the witnesses: (a, b) → solve (a, c), (c, d), (d, b), then take c (and d). */
        PyObject *moves = PyList_New(0);
        int alive[MAXROW];
        for (int i = 0; i < n; i++) alive[i] = 1;
        int stack[4 * MAXROW + 8][3];
        int sp = 0;
        /* frames: kind 0 = solve (a, b); kind 1 = emit the removal of (a, b)'s witness */
        stack[sp][0] = 0; stack[sp][1] = 0; stack[sp][2] = n - 1; sp++;
        while (sp > 0) {
            sp--;
            int kind = stack[sp][0], a = stack[sp][1], b = stack[sp][2];
            if (b == a + 1)
                continue;
            int c = dp->wc[a][b], d = dp->wd[a][b];
            if (kind == 1) {
                int pos = 0;
                for (int i = 0; i < c; i++) pos += alive[i];
                PyObject *m = d < 0 ? Py_BuildValue("(i)", pos) : Py_BuildValue("(ii)", pos, pos + 1);
                PyList_Append(moves, m);
                Py_DECREF(m);
                alive[c] = 0;
                if (d >= 0) alive[d] = 0;
                continue;
            }
            /* pushed in reverse: the pieces left to right, then the removal */
            stack[sp][0] = 1; stack[sp][1] = a; stack[sp][2] = b; sp++;
            if (d < 0) {
                stack[sp][0] = 0; stack[sp][1] = c; stack[sp][2] = b; sp++;
                stack[sp][0] = 0; stack[sp][1] = a; stack[sp][2] = c; sp++;
            } else {
                stack[sp][0] = 0; stack[sp][1] = d; stack[sp][2] = b; sp++;
                stack[sp][0] = 0; stack[sp][1] = c; stack[sp][2] = d; sp++;
                stack[sp][0] = 0; stack[sp][1] = a; stack[sp][2] = c; sp++;
            }
        }
        res = solve_result(OUT_WON, moves, nodes);
    }
    free(dp);
    return res;
}

/* =====================================================================
 * Eliminators by search: subsets of the row
 * ===================================================================== */

#define MODE_INNER 0   /* the cards between a matching pair leave */
#define MODE_OUTER 1   /* Concertina: the matching pair leaves, the middle stays */
#define MODE_PAIRS 2   /* Bayan: two matching cards 1 or 3 apart both leave */

typedef struct {
    int mode, one, two, win_cards;
    uint8_t card[MAXROW]; /* the original row */
    Budget b;
    KeySet dead;
    int path[MAXROW][3]; /* per depth: how many positions, first, second */
    int depth_won;
} ECtx;

typedef struct {
    int p, q; /* current positions removed: p, and q (or -1) */
    int key;
} EMove;

/* Legal moves in the engine's order. idx: original positions of the cards in play. */
static int elim_moves(const ECtx *c, const int *idx, int n, EMove *out)
{
    int k = 0;
    const uint8_t *card = c->card;
    if (c->mode == MODE_PAIRS) {
        for (int i = 0; i + 1 < n; i++) {
            const uint8_t *m = MATCH[card[idx[i]]];
            if (m[card[idx[i + 1]]]) { out[k].p = i; out[k].q = i + 1; k++; }
            if (i + 3 < n && m[card[idx[i + 3]]]) { out[k].p = i; out[k].q = i + 3; k++; }
        }
        return k;
    }
    for (int i = 0; i + 2 < n; i++) {
        const uint8_t *m = MATCH[card[idx[i]]];
        if (c->one && m[card[idx[i + 2]]]) {
            if (c->mode == MODE_INNER) { out[k].p = i + 1; out[k].q = -1; }
            else { out[k].p = i; out[k].q = i + 2; }
            k++;
        }
        if (c->two && i + 3 < n && m[card[idx[i + 3]]]) {
            if (c->mode == MODE_INNER) { out[k].p = i + 1; out[k].q = i + 2; }
            else { out[k].p = i; out[k].q = i + 3; }
            k++;
        }
    }
    return k;
}

static int edfs(ECtx *c, const int *idx, int n, int depth)
{
    int r = count_node(&c->b);
    if (r >= 0)
        return r;
    if (n <= c->win_cards) {
        c->depth_won = depth;
        return R_WIN;
    }
    uint64_t k0 = 0, k1 = 0;
    int rc[13] = {0}, sc[4] = {0};
    for (int i = 0; i < n; i++) {
        int p = idx[i];
        if (p < 64) k0 |= 1ULL << p; else k1 |= 1ULL << (p - 64);
        uint8_t x = c->card[p];
        rc[x % 13]++;
        sc[x / 13]++;
    }
    k1 |= 1ULL << 63;
    if (ks_has(&c->dead, k0, k1))
        return R_DEAD;
    if (c->mode != MODE_INNER) {
        /* In these games a card leaves only with a matching partner: count those without one. */
        int stuck = 0;
        for (int i = 0; i < n; i++) {
            uint8_t x = c->card[idx[i]];
            if (rc[x % 13] == 1 && sc[x / 13] == 1)
                stuck++;
        }
        if (stuck > c->win_cards) {
            ks_add(&c->dead, k0, k1);
            return R_DEAD;
        }
    } else if (!MATCH[c->card[idx[0]]][c->card[idx[n - 1]]]) {
        /* The ends never leave and the last move needs them to match. */
        ks_add(&c->dead, k0, k1);
        return R_DEAD;
    }
    EMove mv[2 * MAXROW];
    int k = elim_moves(c, idx, n, mv);
    for (int j = 0; j < k; j++) {
        int key = j;
        if (c->b.noisy)
            key = (int)(splitmix(&c->b.rng) & 0xFFFFF);
        mv[j].key = key;
    }
    if (c->b.noisy) {
        for (int i = 1; i < k; i++) {
            EMove x = mv[i];
            int j = i - 1;
            while (j >= 0 && mv[j].key > x.key) { mv[j + 1] = mv[j]; j--; }
            mv[j + 1] = x;
        }
    }
    int child[MAXROW];
    for (int j = 0; j < k; j++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (i == mv[j].p || i == mv[j].q)
                continue;
            child[m++] = idx[i];
        }
        c->path[depth][0] = mv[j].q < 0 ? 1 : 2;
        c->path[depth][1] = mv[j].p;
        c->path[depth][2] = mv[j].q;
        r = edfs(c, child, m, depth + 1);
        if (r != R_DEAD)
            return r;
    }
    ks_add(&c->dead, k0, k1);
    return R_DEAD;
}

static int elim_attempt(void *c, const void *idx, int n) { return edfs((ECtx *)c, (const int *)idx, n, 0); }

static PyObject *py_elim_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"cards", "mode", "one", "two", "win_cards", "max_nodes", "max_seconds",
                             "restarts", "stop", NULL};
    Py_buffer buf;
    int mode, one, two, win_cards, restarts = 1;
    unsigned long long max_nodes = 0;
    double max_seconds = 0;
    PyObject *stop_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*ippi|KdpO", kwlist, &buf, &mode, &one, &two, &win_cards,
                                     &max_nodes, &max_seconds, &restarts, &stop_obj))
        return NULL;
    int n = (int)buf.len;
    if (n > MAXROW || mode < 0 || mode > 2) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "a row has at most 128 cards; mode is 0, 1 or 2");
        return NULL;
    }
    ECtx *c = (ECtx *)calloc(1, sizeof(ECtx));
    if (c == NULL) {
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    memcpy(c->card, buf.buf, (size_t)n);
    PyBuffer_Release(&buf);
    if (!cards_valid(c->card, n)) {
        free(c);
        return NULL;
    }
    c->mode = mode; c->one = one; c->two = two; c->win_cards = win_cards;
    c->b.max_nodes = max_nodes;
    Py_buffer stop_view;
    if (!open_search(&c->dead, 1 << 12, MAX_TABLE_SLOTS, 0, stop_obj, &stop_view, &c->b.stop)) {
        free(c);
        return NULL;
    }
    int idx[MAXROW];
    for (int i = 0; i < n; i++) idx[i] = i;
    int r;
    Py_BEGIN_ALLOW_THREADS
    c->b.deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    r = run_attempts(&c->b, restarts, elim_attempt, c, idx, n);
    Py_END_ALLOW_THREADS
    close_search(&c->dead, &stop_view);
    PyObject *moves = PyList_New(0);
    for (int d = 0; moves != NULL && r == R_WIN && d < c->depth_won; d++) {
        PyObject *m = c->path[d][0] == 1 ? Py_BuildValue("(i)", c->path[d][1])
                                         : Py_BuildValue("(ii)", c->path[d][1], c->path[d][2]);
        if (!append_new(moves, m))
            Py_CLEAR(moves);
    }
    PyObject *res = solve_result(search_outcome(r == R_WIN, r != R_DEAD), moves, c->b.nodes);
    free(c);
    return res;
}

static PyMethodDef methods[] = {
    {"stack_solve", (PyCFunction)(void (*)(void))py_stack_solve, METH_VARARGS | METH_KEYWORDS,
     "stack_solve(tops, near, far, right, strict, win_piles, goal, max_nodes=0, max_seconds=0, "
     "restarts=True, stop=None) -> (outcome, [(src, dst)], nodes)"},
    {"elim_dp", (PyCFunction)(void (*)(void))py_elim_dp, METH_VARARGS | METH_KEYWORDS,
     "elim_dp(cards, one, two, max_nodes=0, max_seconds=0, stop=None) -> (outcome, [positions], nodes)"},
    {"elim_solve", (PyCFunction)(void (*)(void))py_elim_solve, METH_VARARGS | METH_KEYWORDS,
     "elim_solve(cards, mode, one, two, win_cards, max_nodes=0, max_seconds=0, restarts=True, stop=None) "
     "-> (outcome, [positions], nodes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_csolver",
    "The compiled core of accordion.solver; see accordion/solver/_pysolver.py for the same in Python.",
    -1, methods,
};

PyMODINIT_FUNC PyInit__csolver(void)
{
    for (int a = 0; a < NCARDS; a++)
        for (int b = 0; b < NCARDS; b++)
            MATCH[a][b] = (a % 13 == b % 13) || (a / 13 == b / 13);
    uint64_t s = 0x5EED0ACC0D10ULL;
    ZOBRIST_FILL(ZOBRIST, &s);
    return PyModule_Create(&module);
}
