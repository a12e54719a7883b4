/* _cstreets' passes (included by _cstreets.c after _cstreets_bf.h): the root to go back to,
 * a depth-first win's line, and the attempts and the best-first pass as the pass scheduler
 * (../_cschedule.h) calls them */
#ifndef ACCORDION_CSTREETS_PASSES_H
#define ACCORDION_CSTREETS_PASSES_H

/* The root position, to go back to for each attempt and to write out a win's moves. */
typedef struct Root {
    uint8_t card[MAXP][MAXPILE], n[MAXP], found[4], pile_of[52], idx_of[52];
    uint64_t ph[2][MAXP], pm[2][MAXP], ksum[2], inpiles;
    int rises;
} Root;

static void save_root(const Ctx *c, Root *r)
{
    memcpy(r->card, c->card, sizeof r->card);
    memcpy(r->n, c->n, sizeof r->n);
    memcpy(r->found, c->found, sizeof r->found);
    memcpy(r->pile_of, c->pile_of, sizeof r->pile_of);
    memcpy(r->idx_of, c->idx_of, sizeof r->idx_of);
    memcpy(r->ph, c->ph, sizeof r->ph);
    memcpy(r->pm, c->pm, sizeof r->pm);
    memcpy(r->ksum, c->ksum, sizeof r->ksum);
    r->inpiles = c->inpiles;
    r->rises = c->rises;
}

static void reset_to_root(Ctx *c, const Root *r)
{
    memcpy(c->card, r->card, sizeof r->card);
    memcpy(c->n, r->n, sizeof r->n);
    memcpy(c->found, r->found, sizeof r->found);
    memcpy(c->pile_of, r->pile_of, sizeof r->pile_of);
    memcpy(c->idx_of, r->idx_of, sizeof r->idx_of);
    memcpy(c->ph, r->ph, sizeof r->ph);
    memcpy(c->pm, r->pm, sizeof r->pm);
    memcpy(c->ksum, r->ksum, sizeof r->ksum);
    c->inpiles = r->inpiles;
    c->rises = r->rises;
    c->depth = 0;
    c->truncated = 0;
}

/* The depth-first win's moves: each frame's last move tried. */
static int line_from_frames(Ctx *c)
{
    free(c->line);
    c->nline = c->depth;
    c->line = (SMove *)malloc((size_t)(c->depth + 1) * sizeof(SMove));
    if (c->line == NULL)
        return 0;
    for (int q = 0; q < c->depth; q++)
        c->line[q] = c->moves[c->frames[q].at + c->frames[q].next - 1];
    return 1;
}

/* ---- the passes, as the scheduler (_cschedule.h) drives them ---- */

/* One depth-first attempt from the root (the scheduler's quick pass): the first in the plain
 * move order, each restart (noisy) with noise seeded by its number (rng). The cuts are the same
 * in every attempt and all sound (`cut` is not read), so an attempt that ends under its limit
 * proves the loss. Its allowance is the limit the scheduler set less the nodes so far; reaching
 * it, the attempt may run on to the end of the budget instead (last_attempt, enter). */
static int sched_attempt(void *core, int noisy, int cut, uint64_t rng)
{
    Ctx *c = (Ctx *)core;
    (void)cut;
    c->attempt = noisy;
    c->rng = rng;
    c->attempt_nodes = c->max_nodes - c->nodes;
    int r = dfs(c);
    if (r == R_WIN && !line_from_frames(c)) {
        c->oom = 1;
        c->stopped = 1; /* no more passes: the solve answers out of memory */
        r = R_STOP;
    }
    return r;
}

/* The best-first pass (the scheduler's one beam, width 1, after the first attempt), of
 * best_first_nodes positions: sound like the attempts, so its R_DEAD is a proof too. */
static int sched_best_first(void *core, int width, int cut)
{
    (void)width;
    (void)cut;
    Ctx *c = (Ctx *)core;
    return best_first(c, c->best_first_nodes);
}

/* Back to the root with a fresh table for the next pass (the best-first pass keeps its own). */
static int sched_reset(void *core)
{
    Ctx *c = (Ctx *)core;
    reset_to_root(c, c->root);
    return ks_reset(&c->seen);
}

#endif
