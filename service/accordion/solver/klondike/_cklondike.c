/*
 * _cklondike: the compiled Klondike search of accordion.solver (docs/solver.md, "Klondike"),
 * mirrored step for step by _pyklondike.py (same move order, same node counts, same verdicts).
 *
 * The position is plain data: the tableau piles (bottom to top, face-down cards first),
 * how many cards of each pile are face down, the foundations as a count per suit, and the
 * talon: the waste (bottom to top) followed by the stock (in drawing order), with ``cur``
 * the number of cards in the waste. A card that leaves the talon is deleted from it, so a
 * DRAW only moves ``cur`` on and a REDEAL sets it to 0: the stock is a cyclic index.
 *
 * Depth-first search with a table of every position visited (keyed on a canonical form:
 * the piles as a multiset, the talon, ``cur`` unless turning one with passes unlimited, the
 * redeals left; the foundations follow from the rest), so the first visit of a position is
 * its only expansion and an exhausted search proves the loss. The moves, each argued in
 * docs/solver.md:
 *   - a card that is safe on its foundation goes there as the only move (see safe()); with passes
 *     unlimited a safe talon card too (turning one any in reach, turning more the talon's last
 *     card when ``cur`` is canonically 0: see safe_talon_card);
 *   - a talon card is played in one macro move: the DRAWs (and REDEAL) that bring it to the
 *     top of the waste, then the card onto a foundation or a pile;
 *   - a King-headed run goes into the first empty pile only, and only off face-down cards;
 *   - a card comes back from a foundation only when some card not on the foundations could
 *     ever be built on it;
 *   - in the full search, a position whose piles and talon were seen with a ``cur`` that
 *     reaches every talon card this one reaches is not expanded (see dominated);
 *   - in every pass, a position in which some card can never depart from its place (so never
 *     goes home) is lost and not expanded (see stuck);
 *   - with partial runs, a run hung on one of two twins (the cards of a rank and colour) and the
 *     same run hung on the other are one position (equivalent runs: the key holds each pile's
 *     face-down cards and lowest face-up card, and the other face-up cards as a set; the moves
 *     choose nothing by which twin a run hangs on, see gen_moves and twin_home).
 * Between the quick passes, beams (beam(): layers of the best positions by a worth, widths
 * doubling) look for the wins the depth-first passes find late; like every quick pass they only
 * ever report a win.
 * The GIL is released; the budgets (nodes, seconds) and the caller's stop flag are read
 * every 1024 positions, as in _csolver.c.
 */
#include "_ccommon.h"
#include "_cschedule.h"
/* The core is this file and three headers, included here in this order, each once (one
 * compilation unit, so the compiler sees the search as before the split): */
#include "_cklondike_state.h"
#include "_cklondike_moves.h"
#include "_cklondike_search.h"

/* ---- the win as primitive moves: (src_zone, src, dst_zone, dst, count) ---- */

static int draws(int from, int to, int d) { return (to - from + d - 1) / d; }

static int expand(const Ctx *c, KState s, PyObject *out)
{
    for (int q = 0; q < c->depth; q++) {
        const KMove *mv = &c->path[q];
        if (mv->kind == M_TAL_FOUND || mv->kind == M_TAL_TAB) {
            int from = s.cur;
            if (mv->wrap) {
                for (int k = draws(s.cur, s.tlen, c->draw); k > 0; k--)
                    if (!push_move(out, Z_STOCK, 0, Z_WASTE, 0, 0))
                        return 0;
                if (!push_move(out, Z_WASTE, 0, Z_STOCK, 0, 0))
                    return 0;
                from = 0;
            }
            for (int k = draws(from, mv->tidx + 1, c->draw); k > 0; k--)
                if (!push_move(out, Z_STOCK, 0, Z_WASTE, 0, 0))
                    return 0;
            int x = s.talon[mv->tidx];
            if (!push_move(out, Z_WASTE, 0, mv->kind == M_TAL_FOUND ? Z_FOUND : Z_TAB,
                      mv->kind == M_TAL_FOUND ? suit_of(x) : mv->dst, 1))
                return 0;
        } else if (mv->kind == M_TAB_FOUND) {
            if (!push_move(out, Z_TAB, mv->src, Z_FOUND, suit_of(s.card[mv->src][s.n[mv->src] - 1]), 1))
                return 0;
        } else if (mv->kind == M_RUN) {
            if (!push_move(out, Z_TAB, mv->src, Z_TAB, mv->dst, mv->count))
                return 0;
        } else if (mv->kind == M_TWIN_HOME) {
            if (!push_move(out, Z_TAB, mv->src, Z_TAB, mv->dst, mv->count) ||
                !push_move(out, Z_TAB, mv->src, Z_FOUND, suit_of(s.card[mv->src][s.n[mv->src] - mv->count - 1]), 1))
                return 0;
        } else if (!push_move(out, Z_FOUND, mv->src, Z_TAB, mv->dst, 1)) {
            return 0;
        }
        apply(&s, mv);
    }
    for (;;) { /* play out: the lowest top goes up */
        int best = -1;
        for (int i = 0; i < c->npiles; i++)
            if (s.n[i] && (best < 0 || rank_of(s.card[i][s.n[i] - 1]) < rank_of(s.card[best][s.n[best] - 1])))
                best = i;
        if (best < 0)
            return 1;
        KMove mv = {M_TAB_FOUND, (uint8_t)best, 0, 1, 0, 0};
        if (!push_move(out, Z_TAB, best, Z_FOUND, suit_of(s.card[best][s.n[best] - 1]), 1))
            return 0;
        apply(&s, &mv);
    }
}

/* ---- Python entry ---- */

static int read_position(PyObject *piles, PyObject *downs, PyObject *found, PyObject *talon, int cur,
                         Ctx *c, KState *s)
{
    memset(s, 0, sizeof *s);
    if (!PyList_Check(piles) || !PyList_Check(downs) || !PyList_Check(found) || !PyBytes_Check(talon)) {
        PyErr_SetString(PyExc_TypeError, "piles: list of bytes, downs: list of int, found: list of 4 int, talon: bytes");
        return 0;
    }
    Py_ssize_t np = PyList_GET_SIZE(piles);
    if (np < 1 || np > MAXP || PyList_GET_SIZE(downs) != np || PyList_GET_SIZE(found) != 4) {
        PyErr_SetString(PyExc_ValueError, "1..10 piles, one face-down count a pile, 4 foundations");
        return 0;
    }
    c->npiles = (int)np;
    for (Py_ssize_t i = 0; i < np; i++) {
        if (!read_pile(PyList_GET_ITEM(piles, i), PyList_GET_ITEM(downs, i), MAXPILE, s->card[i], &s->n[i],
                       &s->down[i]) ||
            !cards_valid(s->card[i], s->n[i])) /* before turn_up and the key read tables by card */
            return 0;
        turn_up(s, (int)i);
    }
    if (!read_foundations(found, 4, s->found))
        return 0;
    if (PyBytes_GET_SIZE(talon) > MAXTALON || cur < 0 || cur > PyBytes_GET_SIZE(talon)) {
        PyErr_SetString(PyExc_ValueError, "the talon holds at most 52 cards and cur is within it");
        return 0;
    }
    s->tlen = (uint8_t)PyBytes_GET_SIZE(talon);
    memcpy(s->talon, PyBytes_AS_STRING(talon), s->tlen);
    if (!cards_valid(s->talon, s->tlen))
        return 0;
    s->stale_piles = (uint16_t)((1u << MAXP) - 1);
    for (int j = 0; j < s->tlen; j++) {
        s->talon_set |= 1ULL << s->talon[j];
        s->talon_key[0] ^= ZT[s->talon[j]][0];
        s->talon_key[1] ^= ZT[s->talon[j]][1];
    }
    s->cur = (uint8_t)cur;
    return 1;
}

/* Whether every face-up card but a pile's lowest lies on a host (one rank higher, the other
 * colour), as every position reached by play has it. */
static int face_up_runs(const Ctx *c, const KState *s)
{
    for (int i = 0; i < c->npiles; i++)
        for (int j = s->down[i] + 1; j < s->n[i]; j++)
            if (!builds_on(s->card[i][j], s->card[i][j - 1]))
                return 0;
    return 1;
}

/* The most slots the table of positions may grow to (it starts small and doubles as it fills,
 * at most half full). A key that does not fit is dropped, and a search whose positions no longer
 * fit revisits them (a cycle of dropped positions runs to MAXDEPTH: UNKNOWN at any budget), so
 * the limit follows the budget: two slots a position a node budget allows (the table never holds
 * more positions than the search counts), or TABLE_RATE positions a second of a time budget, at
 * least `least` (MAX_SLOTS unless a test asks for less, a power of two); with no budget,
 * MAX_SLOTS_ANY. Memory is spent only as the table fills: 16 bytes a slot, so at most 64 bytes a
 * position stored. */
static size_t table_limit(size_t least, unsigned long long max_nodes, double max_seconds)
{
    double want = 0;
    if (max_nodes)
        want = 2.0 * (double)max_nodes;
    else if (max_seconds > 0)
        want = 2.0 * TABLE_RATE * max_seconds;
    size_t cap = least;
    size_t top = max_seconds > 0 ? MAX_SLOTS_TIMED : MAX_SLOTS_ANY; /* a clock: a service's search */
    while (cap < top && (want == 0 || (double)cap < want))
        cap <<= 1;
    return cap;
}

static PyObject *py_klondike_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"piles", "downs", "found", "talon", "cur", "draw", "redeals", "partial_runs",
                             "foundation_return", "root_redeal", "max_nodes", "max_seconds", "stop",
                             "quick_nodes", "quick_total", "progress", "full_moves_every", "restart_nodes",
                             "dominance", "dead_ends", "beam_first", "beam_last", "equivalent_runs", "safe_two",
                             "loose_safe", "min_table_slots", "safe_talon", "loose_talon", NULL};
    PyObject *piles, *downs, *found, *talon, *stop_obj = NULL, *progress_obj = NULL;
    int cur, draw, redeals, partial, fret, root_redeal, dominance = 1, dead_ends = 1, equivalent_runs = 1;
    int safe_two = 1, loose_safe = 0, safe_talon = 1, loose_talon = 0;
    unsigned long long min_table_slots = 0;
    unsigned long long max_nodes = 0, quick_nodes = QUICK_NODES, quick_total = QUICK_TOTAL;
    double max_seconds = 0;
    int full_moves_every = FULL_MOVES_EVERY, beam_first = -1, beam_last = BEAM_LAST_WIDTH;
    unsigned long long restart_nodes = RESTART_NODES;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOiiippp|KdOKKOiKppiipppKpp", kwlist, &piles, &downs, &found, &talon, &cur,
                                     &draw, &redeals, &partial, &fret, &root_redeal, &max_nodes, &max_seconds,
                                     &stop_obj, &quick_nodes, &quick_total, &progress_obj, &full_moves_every,
                                     &restart_nodes, &dominance, &dead_ends, &beam_first, &beam_last,
                                     &equivalent_runs, &safe_two, &loose_safe, &min_table_slots, &safe_talon,
                                     &loose_talon))
        return NULL;
    if (beam_first < 0) /* by the rules: turning one, the beams cost the restarts more wins than they made */
        beam_first = draw > 1 ? BEAM_FIRST_WIDTH : 0;
    if (draw < 1 || draw > 52 || redeals < -1 || redeals > 14) {
        PyErr_SetString(PyExc_ValueError, "draw is 1..52; redeals -1 (unlimited) or 0..14");
        return NULL;
    }
    Ctx *c = (Ctx *)calloc(1, sizeof(Ctx));
    if (c == NULL)
        return PyErr_NoMemory();
    KState root;
    if (!read_position(piles, downs, found, talon, cur, c, &root)) {
        free(c);
        return NULL;
    }
    root.redeals = (int8_t)redeals;
    c->draw = draw;
    c->partial = partial;
    c->fret = fret;
    c->dominance = dominance;
    c->dead_ends = dead_ends;
    c->safe_two = safe_two;
    c->loose_safe = loose_safe;
    c->safe_talon = safe_talon;
    c->loose_talon = loose_talon;
    /* the proof needs a run to move off a twin onto the other, and every face-up card but a pile's
     * lowest on a host (as play keeps it; a position made up with other face-up cards is not) */
    c->twins = equivalent_runs && partial && face_up_runs(c, &root);
    c->root_redeal = root_redeal;
    c->keep_cur = !(draw == 1 && redeals < 0);
    c->max_nodes = max_nodes;
    for (int i = 0; i < c->npiles; i++)
        c->root_down += root.down[i];
    Py_buffer stop_view, progress_view;
    size_t max_slots = table_limit(min_table_slots ? (size_t)min_table_slots : MAX_SLOTS, max_nodes, max_seconds);
    if (!open_search_progress(&c->seen, max_slots < ((size_t)1 << 14) ? max_slots : (size_t)1 << 14, max_slots, 0,
                              stop_obj, &stop_view, &c->stop, progress_obj, &progress_view)) {
        free(c);
        return NULL;
    }
    int r = R_DEAD, ok = 1;
    /* First quick passes with cuts that may lose wins (talon cards onto piles only when a card
     * can follow at once, parts of runs only to send the card beneath up, no returns): most
     * won deals are won in the first. The restarts shake the move order, quick_nodes positions
     * the first pass, restart_nodes (at most quick_nodes) each restart, until quick_total
     * (QUICK_NODES, RESTART_NODES and QUICK_TOTAL unless a test asks for less; no restart with
     * passes limited, and never more than half a node budget or half a time budget: the full
     * search wins some deals at once and alone proves losses). Every full_moves_every-th restart
     * drops the cuts and takes the full search's moves, still shaken: the cuts lose some wins
     * whatever the order (seed 47 turning three: the full search wins in 2,000 positions what no
     * cut pass finds). After each pass that reached its size, one beam, widths beam_first, twice
     * that, ... beam_last, in the same share of the budget: they win deals whose wins the
     * depth-first passes reach late or never, and the narrow ones first cost the restarts
     * little. Then, from scratch, the full search, whose LOST is a proof (_cschedule.h). Before
     * all that, never_free or stuck may prove the loss outright. */
    Schedule plan = {quick_nodes,
                     restart_nodes < quick_nodes ? restart_nodes : quick_nodes,
                     redeals >= 0 ? 0 : quick_total, /* passes limited: the cut that waits for a card to follow costs wins */
                     full_moves_every,
                     1,
                     2,
                     beam_first,
                     beam_last,
                     0};
    ScheduleCore core = {c,          &c->nodes,  &c->max_nodes, &c->stopped, &c->quick_over, sched_quick_pass,
                         sched_beam, sched_full, sched_reset};
    c->root = &root;
    Py_BEGIN_ALLOW_THREADS
    c->deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    c->quick_deadline = schedule_quick_deadline(&plan, c->deadline, max_seconds);
    c->quick = 1;
    int lost_at_root = never_free(c, &root) || (dead_ends && stuck(c, &root)); /* then no search: LOST, 0 positions */
    if (!lost_at_root)
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
    {"klondike_solve", (PyCFunction)(void (*)(void))py_klondike_solve, METH_VARARGS | METH_KEYWORDS,
     "klondike_solve(piles, downs, found, talon, cur, draw, redeals, partial_runs, foundation_return, "
     "root_redeal, max_nodes=0, max_seconds=0, stop=None, quick_nodes=100000, quick_total=2000000, progress=None, full_moves_every=2, restart_nodes=30000, "
     "dominance=True, dead_ends=True, beam_first=-1, beam_last=2048, equivalent_runs=True, safe_two=True, loose_safe=False, min_table_slots=0, safe_talon=True, loose_talon=False) -> (outcome, [(src_zone, src, dst_zone, dst, count)], nodes); dominance=False turns the full search's talon dominance off, "
     "safe_two=False the safe rule one rank further (loose_safe=True: an unsound form of it, tests only), safe_talon=False the safe talon cards sent home alone (loose_talon=True: an unsound form, tests only), min_table_slots=N the table's least limit (a power of two; 0: 2^23; it grows with the budget), "
     "dead_ends=False the dead-end test, equivalent_runs=False the equivalent runs (comparisons), beam_first=0 the beams (-1: 64 turning more than one, else 0); progress, a writable byte, gets the most progress of a position searched "
     "(cards on the foundations plus cards turned up since the root)"},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__cklondike(void)
{
    for (int x = 0; x < 52; x++) {
        BUILDERS[x] = 0;
        BUILDERS_OF_HOSTS[x] = 0;
        for (int y = 0; y < 52; y++) {
            if (builds_on(y, x))
                BUILDERS[x] |= 1ULL << y;
            if (builds_on(x, y))
                BUILDERS_OF_HOSTS[x] |= 1ULL << y;
        }
    }
    uint64_t seed = 0x6B6C6F6E64696BULL;
    for (int w = 0; w < 2; w++) {
        for (int j = 0; j < MAXPILE; j++) {
            ZDOWN[w][j] = splitmix(&seed);
            for (int x = 0; x < 52; x++)
                ZP[j][x][w] = splitmix(&seed);
        }
        for (int x = 0; x < 52; x++)
            ZT[x][w] = splitmix(&seed);
        ZOBRIST_FILL(ZCUR[w], &seed);
        ZOBRIST_FILL(ZRED[w], &seed);
    }
    ZOBRIST_FILL(ZUP, &seed); /* after the others, which keep their values */
    return create_core_module("_cklondike",
                              "The compiled Klondike search of accordion.solver; _pyklondike.py is its twin.",
                              methods);
}
