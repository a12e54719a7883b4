/* _cspider's passes in turn on the scheduler shared with Klondike and Emperor (../_cschedule.h,
 * issue 30; part of _cspider.c, included after _cspider_stage.h). For two or four suits the
 * staged pass (its settings in turn: the scheduler's `first`), the narrow beams 16, 32, 64, the
 * quick pass, the wider beams 128 ... 8192; for one suit the quick pass, then every beam. All but
 * the last may report a win only; then from scratch the full search, whose failure alone is a
 * LOST. Every pass starts from the root with a fresh table. */
#ifndef ACCORDION_CSPIDER_SCHEDULE_H
#define ACCORDION_CSPIDER_SCHEDULE_H

#include "_cschedule.h"

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

/* One search as the scheduler drives it (its ScheduleCore's core). */
typedef struct {
    Ctx *c;
    SState root;
    const StageSetting *settings;
    int nsettings;
    uint64_t max_nodes; /* the whole budget (0: none) */
    int quick_over;     /* never raised: no pass of Spider's has a share of the clock */
} SpiderRun;

/* The staged pass, its settings in turn, each from scratch within its share; one whose share ran
 * out leaves the rest of the budget to the next. */
static int sched_stages(void *core)
{
    SpiderRun *run = (SpiderRun *)core;
    Ctx *c = run->c;
    uint64_t max_nodes = run->max_nodes;
    int r = R_DEAD, ok = 1;
    for (int k = 0; k < run->nsettings; k++) {
        const StageSetting *set = &run->settings[k];
        uint64_t end = set->nodes ? c->nodes + set->nodes : 0;
        c->max_nodes = end && (max_nodes == 0 || end < max_nodes) ? end : max_nodes;
        c->stage_branch = set->branch;
        c->stage_spread = set->spread;
        for (int n = set->first_nodes; n <= STAGE_LAST_NODES; n *= 4)
            run_stages(c, &run->root, n, c->max_nodes, &r, &ok);
        if (r == R_STOP && !c->stopped && (max_nodes == 0 || c->nodes < max_nodes))
            r = R_DEAD;
        c->max_nodes = max_nodes;
    }
    return ok ? r : -1;
}

/* Spider's quick pass is never noisy and never restarts (beams_in_a_row). */
static int sched_quick_pass(void *core, int noisy, int cut, uint64_t rng)
{
    SpiderRun *run = (SpiderRun *)core;
    (void)noisy, (void)rng;
    run->c->quick = cut;
    run->c->depth = 0;
    run->c->st[0] = run->root;
    return dfs(run->c);
}

static int sched_beam(void *core, int width, int cut)
{
    SpiderRun *run = (SpiderRun *)core;
    run->c->quick = cut;
    return beam(run->c, &run->root, width);
}

static int sched_full(void *core)
{
    SpiderRun *run = (SpiderRun *)core;
    run->c->quick = 0;
    run->c->depth = 0;
    run->c->truncated = 0;
    run->c->st[0] = run->root;
    return dfs(run->c);
}

static int sched_reset(void *core) { return ks_reset(&((SpiderRun *)core)->c->seen); }

/* The search from `root`: R_WIN (the line in c->path[0..c->depth)), R_DEAD or R_STOP; *ok is
 * cleared when memory ran out, *full_done set when the full search ran to its end. */
static int spider_search(Ctx *c, const SState *root, const StageSetting *settings, int nsettings,
                         uint64_t max_nodes, uint64_t quick_nodes, int *ok, int *full_done)
{
    int narrow_first = suits_in_deal(c, root) > 1;
    /* quick_nodes, no restarts, the whole budget (share 1 of 1), no full moves on restarts */
    Schedule plan = {.quick_nodes = quick_nodes,
                     .share_num = 1,
                     .share_den = 1,
                     .beam_first = BEAM_FIRST_WIDTH,
                     .beam_last = BEAM_LAST_WIDTH,
                     .beams_before = narrow_first,
                     .beams_in_a_row = 1,
                     .narrow_last = BEAM_NARROW_WIDTH};
    SpiderRun run = {c, *root, settings, nsettings, max_nodes, 0};
    ScheduleCore core = {&run,       &c->nodes,  &c->max_nodes, &c->stopped, &run.quick_over,
                         sched_quick_pass, sched_beam, sched_full,    sched_reset, narrow_first ? sched_stages : NULL};
    c->quick = 1;
    c->max_nodes = max_nodes;
    int r = schedule_run(&plan, &core, max_nodes, ok);
    *full_done = r == R_DEAD; /* only the full search answers R_DEAD */
    return r;
}

#endif
