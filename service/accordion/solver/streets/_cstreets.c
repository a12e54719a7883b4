/*
 * _cstreets: the compiled search of accordion.solver for open single-card tableaux (Streets and
 * Alleys; docs/solver.md, "Streets and Alleys"). No Python twin (issue 30): tests/solver holds it to
 * the engine's brute force on small positions and to its recorded results (recorded.json).
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
#include "_cschedule.h"

/* Restarts: the first attempt may visit this many positions, each next one twice as many. */
#define FIRST_ATTEMPT 20000
/* The best-first pass between the first attempt and the second may visit this many positions. */
#define BEST_FIRST_NODES 400000

#include "_cstreets_pos.h"
#include "_cstreets_dfs.h"
#include "_cstreets_bf.h"
#include "_cstreets_passes.h"

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
    c->budget = max_nodes;
    c->best_first_nodes = best_first_nodes;
    Py_buffer stop_view;
    if (!open_search(&c->seen, (size_t)1 << 14, MAX_SLOTS, 1, stop_obj, &stop_view, &c->stop)) {
        free(c);
        return NULL;
    }
    Root root;
    save_root(c, &root);
    c->root = &root;
    /* Restarts: attempt a visits at most first_attempt * 2^a positions, its table fresh, the
     * moves of equal rank after the first attempt in an order shuffled by noise seeded by a.
     * A win is a win; an attempt that ends without reaching its limit (or the depth cut) has
     * searched everything reachable, so its LOST is a proof whatever the order. The attempt
     * that could not be followed by a whole one runs to the end of the budget (last_attempt).
     * Between the first attempt and the second, the best-first pass (best_first). The pass
     * scheduler shared with Klondike and Emperor (_cschedule.h) runs them: attempts doubling,
     * no limit on them but the budget, the best-first pass as its one beam, and every pass's
     * LOST a proof, so no full search after them. */
    /* by name: other cores' fields may be added to Schedule, and any not named here are 0 */
    Schedule plan = {.quick_nodes = first_attempt,
                     .restart_nodes = 2 * first_attempt,
                     .quick_total = UINT64_MAX,
                     .share_num = 1,
                     .share_den = 1,
                     .beam_first = best_first_nodes ? 1 : 0,
                     .beam_last = 1,
                     .restarts_double = 1,
                     .passes_prove = 1};
    ScheduleCore core = {c, &c->nodes, &c->max_nodes, &c->stopped, &c->quick_over, sched_attempt, sched_best_first,
                         NULL, sched_reset};
    int r, ok;
    Py_BEGIN_ALLOW_THREADS
    c->start = now_seconds();
    c->deadline = max_seconds > 0 ? c->start + max_seconds : 0;
    r = schedule_run(&plan, &core, max_nodes, &ok);
    ok = ok && !c->oom;
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
