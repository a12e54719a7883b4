/* The pass scheduler shared by the C cores whose search runs in passes (issue 30): quick passes
 * that look for a win only (the first in the plain move order, restarts with the move order
 * shaken), beams of growing width, each pass's share of the node and time budget, then from
 * scratch the full search, whose LOST is a proof (docs/solver.md, "Restarts", *Beams*).
 * Each core keeps its own search (a depth-first pass, a beam, the full search) and hands it in
 * as callbacks; this file only decides what runs when, within which node limit. Included by
 * a core after _ccommon.h (R_WIN, R_DEAD, R_STOP). */
#ifndef ACCORDION_CSCHEDULE_H
#define ACCORDION_CSCHEDULE_H

#include <stdint.h>

/* A core's settings (its defaults, or what a test asks for). */
typedef struct {
    uint64_t quick_nodes;   /* positions of the first quick pass */
    uint64_t restart_nodes; /* positions of each restart */
    uint64_t quick_total;   /* positions of all the quick passes and beams together (0: the first pass only) */
    int full_moves_every;   /* every so many restarts takes the full search's moves, not the cut (0: never) */
    /* The quick passes' share of a node or time budget: share_num / share_den of it (node
     * budgets: max_nodes / share_den * share_num, in that order); the full search has the rest. */
    int share_num, share_den;
    int beam_first, beam_last; /* the beams' widths: beam_first, twice that, ... beam_last (0: none) */
    /* Where the beams run: 1, all before the quick passes, each width twice (the cut's moves,
     * then the full search's: they win different deals; Emperor); 0, one after each quick pass
     * that reached its size, over the full search's moves (Klondike). */
    int beams_before;
    /* Streets' (issue 30; 0, 0 keep the schedule above as it was for Klondike and Emperor): */
    int restarts_double; /* each restart twice the one before (the first: restart_nodes) */
    /* Every pass and beam searches with sound cuts only: one that runs out of moves (R_DEAD)
     * proves the loss, and no full search follows the passes (ScheduleCore.full unused). */
    int passes_prove;
    /* 1 (Spider): no restarts and no share; the beams each width once, over the cut's moves, each
     * on what is left of the budget: those up to narrow_last before the quick pass when
     * beams_before, the rest after it in a row, whatever it returned. 0: as above. */
    int beams_in_a_row, narrow_last;
} Schedule;

/* A core's search, as the scheduler drives it. The scheduler sets *max_nodes (the limit the
 * core's node count reads) before each pass; the core counts into *nodes and raises *stopped
 * (the clock or the caller's stop flag) and *quick_over (the quick passes' share of the clock). */
typedef struct {
    void *core;
    uint64_t *nodes, *max_nodes;
    int *stopped, *quick_over;
    /* One depth-first pass from the root: noisy (the move order shaken by a generator seeded
     * with rng), cut (the quick pass's cuts): R_WIN, R_DEAD or R_STOP. */
    int (*quick_pass)(void *core, int noisy, int cut, uint64_t rng);
    /* One beam of `width` from the root, over the cut's moves or the full search's: R_WIN,
     * R_DEAD, R_STOP, or -1 out of memory. */
    int (*beam)(void *core, int width, int cut);
    /* The full search from the root (the core clears its quick-pass state first). */
    int (*full)(void *core);
    int (*reset)(void *core); /* a fresh table; 0 out of memory */
    /* A pass of the core's own before all the others, on its table as it finds it (Spider's
     * staged pass): R_WIN, R_DEAD, R_STOP (the budget spent or stopped), -1 out of memory. NULL: none. */
    int (*first)(void *core);
} ScheduleCore;

/* When the quick passes' share of a time budget ends (0: no time budget). */
static inline double schedule_quick_deadline(const Schedule *s, double deadline, double max_seconds)
{
    return max_seconds > 0 ? deadline - max_seconds * (s->share_den - s->share_num) / s->share_den : 0;
}

/* Whether the quick passes must end: the clock, the stop flag, a budget or their share spent. */
static inline int schedule_spent(const ScheduleCore *k, uint64_t max_nodes, uint64_t quick_total)
{
    return *k->stopped || (max_nodes && *k->nodes >= max_nodes) || *k->nodes >= quick_total || *k->quick_over;
}

/* Spider's beams of widths from..to, doubling, each from the root with a fresh table while none
 * has won and budget is left: the last one's result (r when none ran). */
static inline int schedule_beams_in_a_row(const ScheduleCore *k, int from, int to, uint64_t max_nodes, int r, int *ok)
{
    for (int w = from; w > 0 && w <= to && r != R_WIN && !*k->stopped && (max_nodes == 0 || *k->nodes < max_nodes);
         w *= 2) {
        *k->max_nodes = max_nodes;
        if (!(*ok = k->reset(k->core)))
            break;
        if ((r = k->beam(k->core, w, 1)) < 0) {
            *ok = 0;
            break;
        }
    }
    return r;
}

/* The beams, the quick passes and the full search, every one from the root with a fresh table
 * (the first finds it fresh): R_WIN (the line is the core's), R_DEAD (the full search ran out of
 * moves: a loss, unless the core's search was truncated) or R_STOP. *ok is cleared when memory
 * ran out. A pass that runs out of moves (R_DEAD) has seen its whole space, so the full search
 * starts at once; a depth-first pass that went wrong near the root stays wrong for the rest of
 * its budget, a restart does not. The first quick pass runs even when quick_total is 0. */
static inline int schedule_run(const Schedule *s, const ScheduleCore *k, uint64_t max_nodes, int *ok)
{
    uint64_t quick_total = s->quick_total;
    if (max_nodes && quick_total > max_nodes / (uint64_t)s->share_den * (uint64_t)s->share_num)
        quick_total = max_nodes / (uint64_t)s->share_den * (uint64_t)s->share_num;
    int r = R_DEAD, fresh = 1;
    *ok = 1;
    if (k->first != NULL) {
        fresh = 0;
        if ((r = k->first(k->core)) < 0) {
            *ok = 0;
            return R_STOP;
        }
    }
    if (s->beams_in_a_row) {
        r = schedule_beams_in_a_row(k, s->beams_before ? s->beam_first : 0, s->narrow_last, max_nodes, r, ok);
        if (*ok && r != R_WIN && !*k->stopped && (max_nodes == 0 || *k->nodes < max_nodes)) {
            uint64_t limit = *k->nodes + s->quick_nodes;
            *k->max_nodes = max_nodes && max_nodes < limit ? max_nodes : limit;
            if ((*ok = k->reset(k->core)))
                r = k->quick_pass(k->core, 0, 1, 0);
        }
        if (*ok)
            r = schedule_beams_in_a_row(k, s->beams_before ? s->narrow_last * 2 : s->beam_first, s->beam_last,
                                        max_nodes, r, ok);
    } else if (s->beams_before) {
        *k->max_nodes = quick_total;
        for (int w = s->beam_first, full = 0; w > 0 && w <= s->beam_last && r == R_DEAD && *k->nodes < quick_total;
             w = full ? w * 2 : w, full = !full) {
            if (!fresh && !(*ok = k->reset(k->core)))
                break;
            fresh = 0;
            r = k->beam(k->core, w, !full);
            if (r < 0) {
                *ok = 0;
                break;
            }
        }
    }
    int width = s->beams_before ? 0 : s->beam_first; /* the next beam's, after a quick pass */
    uint64_t restart = s->restart_nodes;
    for (int pass = 0; !s->beams_in_a_row && *ok && r != R_WIN && !*k->stopped && !*k->quick_over && (*k->nodes < quick_total || *k->nodes == 0);
         pass++) {
        uint64_t limit = *k->nodes + (pass > 0 ? restart : s->quick_nodes);
        if (pass > 0 && s->restarts_double)
            restart *= 2;
        if (pass > 0 && limit > quick_total)
            limit = quick_total; /* the last restart is cut short: the full search keeps its share */
        *k->max_nodes = max_nodes && max_nodes < limit ? max_nodes : limit;
        if (!fresh && !(*ok = k->reset(k->core)))
            break;
        fresh = 0;
        r = k->quick_pass(k->core, pass > 0, !(pass > 0 && s->full_moves_every > 0 && pass % s->full_moves_every == 0),
                          (uint64_t)pass);
        if (r != R_STOP || schedule_spent(k, max_nodes, quick_total))
            break;
        if (width > 0 && width <= s->beam_last) {
            *k->max_nodes = quick_total;
            if (!(*ok = k->reset(k->core)))
                break;
            r = k->beam(k->core, width, 0);
            width *= 2;
            if (r < 0) {
                *ok = 0;
                break;
            }
            if (!s->passes_prove)
                r = r == R_WIN ? R_WIN : R_STOP; /* no beam claims a loss */
            if (r != R_STOP || schedule_spent(k, max_nodes, quick_total))
                break;
        }
    }
    if (s->passes_prove)
        return r; /* R_WIN, R_DEAD (a pass saw its whole space) or R_STOP */
    if (*ok && r != R_WIN && !*k->stopped && (max_nodes == 0 || *k->nodes < max_nodes)) {
        if (!(*ok = k->reset(k->core)))
            return R_STOP;
        *k->max_nodes = max_nodes;
        return k->full(k->core);
    }
    return r == R_WIN ? R_WIN : R_STOP; /* no full search: the budget went on passes that prove nothing */
}

#endif
