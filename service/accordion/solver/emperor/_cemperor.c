/*
 * _cemperor: the compiled Emperor search of accordion.solver (docs/solver.md, "Emperor"), one
 * core in four files: _cemperor_position.h (the position, its key, a move played),
 * _cemperor_moves.h (the moves and their order), _cemperor_search.h (the passes) and this file
 * (the Python entry). Its Python twin was dropped in issue 30: tests/solver/recorded.json holds
 * the results it agreed on.
 *
 * The position is plain data: ten tableau piles (bottom to top, face-down cards first), how
 * many cards of each are face down, eight foundation heights (suit s: foundations s and s + 4,
 * a card going to the first that takes it, as the engine does), and the talon: the waste
 * (bottom to top) then the stock (drawing order), ``cur`` the waste's length. One pass, one
 * card at a time: a card leaving the talon is deleted from it and ``cur`` becomes its index.
 * The two decks' equal cards are the same byte, so they are interchangeable in every key.
 *
 * Depth-first search with a table of every position visited (keyed on the piles as a
 * multiset, the talon and ``cur``; the foundations follow from the rest), so an exhausted
 * search proves the loss. Moves, argued in docs/solver.md: an Ace on top goes up as the only
 * move (compelled by the rules), then a *safe* card; a talon card in reach (no DRAW past an
 * Ace: it is compelled) is one macro move "draw to it, play it"; a card goes into the first
 * space only, and a lone card never into a space. Beams first (beam(), worth(): the best
 * positions of each layer kept, widths doubling, each width over the cut's moves then over
 * the full ones), then quick passes: the first moves a card
 * off a face-up card only when the card uncovered is of use at once, the restarts after it
 * shake the move order (and every second one drops that cut); the beams and the quick passes
 * may miss wins, so when they find none the full search runs from scratch. The GIL is released; the budgets and the
 * caller's stop flag are read every 1024 positions.
 */
#include "_ccommon.h"
#include "_cschedule.h"
#include "_cemperor_position.h"
#include "_cemperor_moves.h"
#include "_cemperor_search.h"

/* ---- Python entry ---- */

static int read_position(PyObject *piles, PyObject *downs, PyObject *found, PyObject *talon, int cur, EState *s)
{
    memset(s, 0, sizeof *s);
    if (!PyList_Check(piles) || !PyList_Check(downs) || !PyList_Check(found) || !PyBytes_Check(talon)) {
        PyErr_SetString(PyExc_TypeError, "piles: list of bytes, downs: list of int, found: list of 8 int, talon: bytes");
        return 0;
    }
    if (PyList_GET_SIZE(piles) != NPILES || PyList_GET_SIZE(downs) != NPILES || PyList_GET_SIZE(found) != 8) {
        PyErr_SetString(PyExc_ValueError, "10 piles, one face-down count a pile, 8 foundations");
        return 0;
    }
    for (Py_ssize_t i = 0; i < NPILES; i++) {
        if (!read_pile(PyList_GET_ITEM(piles, i), PyList_GET_ITEM(downs, i), MAXPILE, s->card[i], &s->n[i],
                       &s->down[i]) ||
            !cards_valid(s->card[i], s->n[i]))
            return 0;
        turn_up(s, (int)i);
    }
    if (!read_foundations(found, 8, s->found))
        return 0;
    if (PyBytes_GET_SIZE(talon) > MAXTALON || cur < 0 || cur > PyBytes_GET_SIZE(talon)) {
        PyErr_SetString(PyExc_ValueError, "the talon holds at most 104 cards and cur is within it");
        return 0;
    }
    s->tlen = (uint8_t)PyBytes_GET_SIZE(talon);
    memcpy(s->talon, PyBytes_AS_STRING(talon), s->tlen);
    if (!cards_valid(s->talon, s->tlen))
        return 0;
    s->cur = (uint8_t)cur;
    return 1;
}

static PyObject *py_emperor_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"piles", "downs", "found", "talon", "cur", "max_nodes", "max_seconds", "stop",
                             "quick_nodes", "restart_nodes", "quick_total", "full_moves_every", "quick_percent",
                             "beam_first", "beam_last", "progress", NULL};
    PyObject *piles, *downs, *found, *talon, *stop_obj = NULL, *progress_obj = NULL;
    int cur, full_moves_every = FULL_MOVES_EVERY, quick_percent = QUICK_PERCENT;
    int beam_first = BEAM_FIRST, beam_last = BEAM_LAST;
    unsigned long long max_nodes = 0, quick_nodes = QUICK_NODES, restart_nodes = RESTART_NODES,
                       quick_total = QUICK_TOTAL;
    double max_seconds = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOi|KdOKKKiiiiO", kwlist, &piles, &downs, &found, &talon, &cur,
                                     &max_nodes, &max_seconds, &stop_obj, &quick_nodes, &restart_nodes,
                                     &quick_total, &full_moves_every, &quick_percent, &beam_first, &beam_last,
                                     &progress_obj))
        return NULL;
    Ctx *c = (Ctx *)calloc(1, sizeof(Ctx));
    if (c == NULL)
        return PyErr_NoMemory();
    if (!read_position(piles, downs, found, talon, cur, &c->st[0])) {
        free(c);
        return NULL;
    }
    EState root = c->st[0];
    for (int i = 0; i < NPILES; i++)
        c->root_down += root.down[i];
    Py_buffer stop_view, progress_view;
    if (!open_search_progress(&c->seen, (size_t)1 << 14, MAX_SLOTS, 0, stop_obj, &stop_view, &c->stop, progress_obj,
                              &progress_view)) {
        free(c);
        return NULL;
    }
    int r, ok = 1;
    /* Passes that look for a win only, and whose failure proves nothing: first the beams, of
     * width beam_first, twice that, ... up to beam_last, each over the first quick pass's moves
     * (the cut), then over the full search's (they win different deals); then the quick
     * passes: the first in the plain move order with the cut (quick_nodes positions), then
     * restarts with the move order shaken (restart_nodes positions each), every
     * full_moves_every-th of them with the full search's moves, until quick_total positions in
     * all, beams included (never more than quick_percent of a node or time budget: the full
     * search keeps the rest). Then, from scratch, the full search, whose LOST is a proof
     * (_cschedule.h). */
    Schedule plan = {quick_nodes, restart_nodes, quick_total, full_moves_every, quick_percent, 100,
                     beam_first,  beam_last,     1};
    ScheduleCore core = {c,          &c->nodes,  &c->max_nodes, &c->stopped, &c->quick_over, sched_quick_pass,
                         sched_beam, sched_full, sched_reset};
    c->root = root;
    Py_BEGIN_ALLOW_THREADS
    c->deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    c->quick_deadline = schedule_quick_deadline(&plan, c->deadline, max_seconds);
    c->quick = 1;
    r = schedule_run(&plan, &core, max_nodes, &ok);
    Py_END_ALLOW_THREADS
    close_search_progress(&c->seen, &stop_view, &progress_view, c->best);
    int outcome = search_outcome(r == R_WIN, r == R_STOP || c->truncated);
    PyObject *moves = line_list(ok);
    if (moves != NULL && outcome == OUT_WON && !expand(c, root, moves))
        Py_CLEAR(moves);
    PyObject *res = solve_result(outcome, moves, c->nodes);
    free(c);
    return res;
}

static PyMethodDef methods[] = {
    {"emperor_solve", (PyCFunction)(void (*)(void))py_emperor_solve, METH_VARARGS | METH_KEYWORDS,
     "emperor_solve(piles, downs, found, talon, cur, max_nodes=0, max_seconds=0, stop=None, quick_nodes=200000, "
     "restart_nodes=50000, quick_total=16000000, full_moves_every=2, quick_percent=75, beam_first=16, "
     "beam_last=2048, progress=None) -> "
     "(outcome, [(src_zone, src, dst_zone, dst, count)], nodes); progress, a writable byte, gets the most "
     "progress of a position searched (cards on the foundations plus cards turned up)"},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__cemperor(void)
{
    uint64_t seed = 0x656D7065726F72ULL;
    for (int w = 0; w < 2; w++) {
        ZOBRIST_FILL(ZDOWN[w], &seed);
        ZOBRIST_FILL(ZP[w], &seed);
        ZOBRIST_FILL(ZT[w], &seed);
        ZOBRIST_FILL(ZCUR[w], &seed);
    }
    return create_core_module("_cemperor",
                              "The compiled Emperor search of accordion.solver (emperor/README.md).",
                              methods);
}
