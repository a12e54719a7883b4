/*
 * _cspider: the compiled Spider search of accordion.solver (docs/solver.md, "Spider"); one core
 * in five files: the position and its moves (_cspider_position.h), the depth-first search and
 * the beams (_cspider_passes.h), the staged pass (_cspider_stage.h), the passes in turn on the
 * shared scheduler (_cspider_schedule.h, ../_cschedule.h), and here the Python entry.
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

#include "_cspider_position.h"
#include "_cspider_passes.h"
#include "_cspider_stage.h"
#include "_cspider_schedule.h"

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
    r = spider_search(c, &root, settings, nsettings, max_nodes, quick_nodes, &ok, &full_done);
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
