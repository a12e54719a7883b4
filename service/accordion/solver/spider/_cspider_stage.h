/* _cspider's staged pass for two and four suits (part of _cspider.c, included after
 * _cspider_passes.h): each stage between two DEALs best first, the DEAL from its best positions,
 * the settings it runs in turn. */
#ifndef ACCORDION_CSPIDER_STAGE_H
#define ACCORDION_CSPIDER_STAGE_H

/* ---- the staged pass ---- */

/* Four suits (and two): the beams DEAL the whole stock early and die with cards face down. The staged
 * pass searches each stage (the positions between two DEALs) on its own, best first by the
 * stage worth over the quick pass's moves (the last stage: every move, stage()) and runs
 * through spaces, without the DEAL, at most `stage_nodes` positions made; then from the
 * setting's number of best positions of the stage
 * that may DEAL (no space), best first, it DEALs and searches the next stage, backing up to the
 * next of them when a later stage finds no win. It only reports a win. */
#define STAGE_LAST_NODES 1280000 /* a stage's positions: the setting's first size, 4 times more, ... up to this */
#define MAX_STAGE_BRANCH 4
#define MAX_STAGE_SETTINGS 8

/* One setting of the staged pass: the first stages' size (then 4 times more, ... while the pass
 * ends without a win), how many positions a stage DEALs from, how many piles each of them must
 * differ in from those taken before it (0: the best, whatever they are), and the positions the
 * setting may make (0: the rest of the budget). The settings run in turn, each from scratch
 * (docs/solver.md, "Settings in turn"): which deals win moves a lot between settings, and the
 * kept three win 20 of four-suit seeds 0-49 with 3 M positions each, each alone 13-14. The
 * first keeps 3 M (a budget up to 3 M searches as before): its wins come anywhere in them, and
 * a 1 M / 2 M split won 16 of seeds 0-49 but 10 of 100000-100049 against 11. */
typedef struct {
    int first_nodes, branch, spread;
    uint64_t nodes;
} StageSetting;

static const StageSetting STAGE_SETTINGS[] = {{20000, 2, 0, 3000000}, {10000, 2, 3, 3000000}, {20000, 3, 0, 0}};

/* A stage position's heap key (_ccommon.h's heap pops the least first): the higher worth first,
 * then the one made first (so C and Python, with heapq on (-worth, index), agree). */
static uint64_t stage_key(int worth, int32_t at)
{
    return ((uint64_t)((int64_t)INT32_MAX - worth) << 32) | (uint32_t)at;
}

/* A stage's position packed: the piles one after another (a deal holds 104 cards). */
typedef struct {
    uint8_t card[MAXSTOCK];
    uint8_t n[NPILES], down[NPILES];
    uint8_t sp, found;
} Packed;

static int pack(const SState *s, Packed *p)
{
    int k = 0;
    for (int i = 0; i < NPILES; i++) {
        if (k + s->n[i] > MAXSTOCK)
            return 0;
        memcpy(&p->card[k], s->card[i], s->n[i]);
        k += s->n[i];
        p->n[i] = s->n[i];
        p->down[i] = s->down[i];
    }
    p->sp = s->sp;
    p->found = s->found;
    return 1;
}

static void unpack(const Packed *p, SState *s)
{
    int k = 0;
    for (int i = 0; i < NPILES; i++) {
        memcpy(s->card[i], &p->card[k], p->n[i]);
        k += p->n[i];
        s->n[i] = p->n[i];
        s->down[i] = p->down[i];
    }
    s->sp = p->sp;
    s->found = p->found;
}

/* The moves from a stage's root to its position `at`, written from c->path[c->depth]; their
 * number, or -1 when they would reach MAXDEPTH. */
static int stage_line(Ctx *c, const int32_t *parent, const SMove *mv, int32_t at)
{
    int len = 0;
    for (int32_t q = at; parent[q] >= 0; q = parent[q])
        len++;
    if (c->depth + len >= MAXDEPTH)
        return -1;
    for (int32_t q = at, d = len; parent[q] >= 0; q = parent[q])
        c->path[c->depth + --d] = mv[q];
    return len;
}

typedef struct {
    SState s;
    int len; /* moves from the stage's root */
    SMove line[MAXDEPTH];
} StageLeaf;

/* Whether position p differs from each of the leaves in at least `spread` piles (cards or
 * face-down count). One move changes two piles, so a spread of 3 keeps a stage from DEALing
 * from two positions one move apart. */
static int spread_from(const Packed *p, const StageLeaf *leaves, int nleaves, int spread)
{
    for (int k = 0; k < nleaves; k++) {
        const SState *s = &leaves[k].s;
        int differ = 0;
        for (int i = 0, at = 0; i < NPILES; at += p->n[i++])
            differ += p->n[i] != s->n[i] || p->down[i] != s->down[i] || memcmp(&p->card[at], s->card[i], p->n[i]) != 0;
        if (differ < spread)
            return 0;
    }
    return 1;
}

/* The stage from `root` (in the table already), then the stages after the DEALs from its best
 * positions: R_WIN with the line in c->path[0..c->depth), R_DEAD, R_STOP, or -1 out of memory. */
static int stage(Ctx *c, const SState *root, int stage_nodes)
{
    int r = R_DEAD, np = 1, nleaves = 0, made = 0, quick = c->quick;
    /* The last stage (the stock dealt) over every legal move, not the quick pass's: its tableau is
     * all there is, and what locks it is mostly what the cuts leave out (part of a unit onto
     * another suit, a unit off its natural host, into a space), while a failed last stage over
     * the cuts ended in a few dozen positions. Four suits, seeds 9,200,000-9,200,049 at 3 M
     * positions: 47 won against 9 (docs/solver.md, "The last stage"). Earlier stages keep the
     * cuts: every stage over every move won 26 of the first 45 seeds, against 43. */
    if (root->sp >= c->slen)
        c->quick = 0;
    size_t nh = 0;
    size_t cap = (size_t)stage_nodes + 1;
    Packed *pool = (Packed *)malloc(cap * sizeof(Packed));
    int32_t *parent = (int32_t *)malloc(cap * sizeof(int32_t));
    int *worths = (int *)malloc(cap * sizeof(int));
    SMove *mv = (SMove *)malloc(cap * sizeof(SMove));
    HeapItem *heap = (HeapItem *)malloc(cap * sizeof(HeapItem));
    StageLeaf *leaves = (StageLeaf *)malloc(MAX_STAGE_BRANCH * sizeof(StageLeaf));
    SState cur, t;
    SMove moves[MAXMOVES];
    uint64_t a, b;
    if (pool == NULL || parent == NULL || worths == NULL || mv == NULL || heap == NULL || leaves == NULL) {
        r = -1;
        goto done;
    }
    if (!pack(root, &pool[0]))
        goto done; /* more than a deal's cards: only hand-made positions */
    parent[0] = -1;
    worths[0] = worth(root, &STAGE_WEIGHTS);
    heap_push(heap, &nh, (HeapItem){stage_key(worths[0], 0), 0});
    while (nh > 0 && made < stage_nodes) {
        HeapItem it = heap_pop(heap, &nh);
        unpack(&pool[it.idx], &cur);
        int nm = gen_moves(c, &cur, moves);
        for (int q = 0; q < nm && made < stage_nodes; q++) {
            if (!fits(c, &cur, &moves[q]))
                continue;
            if (count_node(c)) {
                r = R_STOP;
                goto done;
            }
            made++;
            t = cur;
            apply(c, &t, &moves[q]);
            note_progress(c, &t);
            if (is_won(c, &t)) {
                int len = stage_line(c, parent, mv, it.idx);
                if (len < 0)
                    continue;
                c->depth += len;
                c->path[c->depth++] = moves[q];
                r = R_WIN;
                goto done;
            }
            key_of(c, &t, &a, &b);
            if (ks_has(&c->seen, a, b) || !pack(&t, &pool[np]))
                continue;
            ks_add(&c->seen, a, b);
            parent[np] = it.idx;
            mv[np] = moves[q];
            worths[np] = worth(&t, &STAGE_WEIGHTS);
            heap_push(heap, &nh, (HeapItem){stage_key(worths[np], np), (uint32_t)np});
            np++;
        }
    }
    /* The c->stage_branch best positions that may DEAL (stock left, no space), best first; with
     * a spread, each the best that differs from those taken before in that many piles, if any. */
    while (root->sp < c->slen && nleaves < c->stage_branch) {
        int32_t best = -1, apart = -1; /* apart: the best of those that differ enough */
        for (int32_t q = 0; q < np; q++) {
            int space = 0;
            for (int i = 0; i < NPILES; i++)
                space |= pool[q].n[i] == 0;
            if (space || worths[q] == INT_MIN)
                continue;
            if (best < 0 || worths[q] > worths[best])
                best = q;
            if ((apart < 0 || worths[q] > worths[apart]) && spread_from(&pool[q], leaves, nleaves, c->stage_spread))
                apart = q;
        }
        if (apart >= 0)
            best = apart;
        if (best < 0)
            break;
        worths[best] = INT_MIN; /* taken */
        int len = stage_line(c, parent, mv, best);
        if (len < 0)
            continue;
        StageLeaf *leaf = &leaves[nleaves++];
        unpack(&pool[best], &leaf->s);
        leaf->len = len;
        memcpy(leaf->line, &c->path[c->depth], (size_t)len * sizeof(SMove));
    }
    free(pool);
    free(parent);
    free(worths);
    free(mv);
    free(heap);
    pool = NULL, parent = NULL, worths = NULL, mv = NULL, heap = NULL;
    for (int k = 0; k < nleaves; k++) {
        const StageLeaf *leaf = &leaves[k];
        const SMove deal = {-1, 0, 0};
        int depth0 = c->depth;
        if (!fits(c, &leaf->s, &deal))
            continue;
        memcpy(&c->path[depth0], leaf->line, (size_t)leaf->len * sizeof(SMove));
        c->depth += leaf->len;
        c->path[c->depth++] = deal;
        if (count_node(c)) {
            r = R_STOP;
            goto done;
        }
        t = leaf->s;
        apply(c, &t, &deal);
        note_progress(c, &t);
        if (is_won(c, &t)) {
            r = R_WIN;
            goto done;
        }
        key_of(c, &t, &a, &b);
        if (!ks_has(&c->seen, a, b)) {
            ks_add(&c->seen, a, b);
            r = stage(c, &t, stage_nodes);
            if (r != R_DEAD)
                goto done;
        }
        c->depth = depth0;
    }
done:
    c->quick = quick;
    free(pool);
    free(parent);
    free(worths);
    free(mv);
    free(heap);
    free(leaves);
    return r;
}

/* The staged pass of `stage_nodes` a stage unless a pass has won, the budget is spent or memory
 * ran out. */
static void run_stages(Ctx *c, const SState *root, int stage_nodes, uint64_t max_nodes, int *r, int *ok)
{
    if (!next_pass(c, max_nodes, *r, ok))
        return;
    uint64_t a, b;
    key_of(c, root, &a, &b);
    ks_add(&c->seen, a, b);
    c->depth = 0;
    c->staged = 1;
    *r = stage(c, root, stage_nodes);
    c->staged = 0;
    if (*r < 0)
        *ok = 0;
}

#endif
