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
 *
 * One core in four files: this one (the entry functions and the module), _crow.h (the sizes,
 * match table, Zobrist keys, node budget and restart schedule the searches share), _cstack.h
 * (the stacking search) and _celim.h (the eliminators' programme and search).
 */
#include "_ccommon.h"
#include "_crow.h"
#include "_cstack.h"
#include "_celim.h"

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
    uint8_t tops[MAXROW];
    int n = read_row(&buf, 1, "a row has 1 to 128 piles", tops);
    if (n < 0)
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
    uint8_t t[MAXROW];
    int n = read_row(&buf, 0, "a row has at most 128 cards", t);
    if (n < 0)
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
    int stopped;
    Py_BEGIN_ALLOW_THREADS
    stopped = elim_dp_fill(dp, t, n, one, two, max_nodes, max_seconds, stop, &nodes);
    Py_END_ALLOW_THREADS
    release_stop(&stop_view);
    PyObject *res;
    if (stopped)
        res = solve_result(OUT_UNKNOWN, PyList_New(0), nodes);
    else if (!dp->W[0][n - 1])
        res = solve_result(OUT_LOST, PyList_New(0), nodes);
    else
        res = solve_result(OUT_WON, elim_dp_line(dp, n), nodes);
    free(dp);
    return res;
}

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
    if (mode < 0 || mode > 2) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "mode is 0, 1 or 2");
        return NULL;
    }
    ECtx *c = (ECtx *)calloc(1, sizeof(ECtx));
    if (c == NULL) {
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    int n = read_row(&buf, 0, "a row has at most 128 cards", c->card);
    if (n < 0) {
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

PyMODINIT_FUNC PyInit__csolver(void)
{
    for (int a = 0; a < NCARDS; a++)
        for (int b = 0; b < NCARDS; b++)
            MATCH[a][b] = (a % 13 == b % 13) || (a / 13 == b / 13);
    uint64_t s = 0x5EED0ACC0D10ULL;
    ZOBRIST_FILL(ZOBRIST, &s);
    return create_core_module("_csolver",
                              "The compiled row searches of accordion.solver; row/_pysolver.py is their twin.",
                              methods);
}
