/* _cspider's position (part of the one core _cspider.c, which includes it after _ccommon.h): the
 * piles, the stock's index and the suits lifted; its key, its moves by class, a move applied,
 * the node count and the progress noted. */
#ifndef ACCORDION_CSPIDER_POSITION_H
#define ACCORDION_CSPIDER_POSITION_H

#define NPILES 10
#define MAXPILE 104
#define MAXSTOCK 104
#define MAXMOVES 1400
#define MAXDEPTH 1000
#define MAX_SLOTS ((size_t)1 << 23)
#define QUICK_NODES 1000000
#define BEAM_FIRST_WIDTH 16 /* the beams: 16, 32, 64 before the quick pass, 128 ... 8192 after */
#define BEAM_NARROW_WIDTH 64
#define BEAM_LAST_WIDTH 8192
#define SUITLEN 13
#define NCLASSES 7

enum { P_SUIT, P_TURN, P_EMPTY, P_FREE, P_SPACE, P_REST, P_DEAL };

typedef struct {
    int8_t src;   /* -1: the DEAL */
    uint8_t dst;
    int8_t count; /* < 0: a run of -count cards, several units, moved by way of the spaces (run_moves) */
} SMove;

typedef struct {
    uint8_t card[NPILES][MAXPILE];
    uint8_t n[NPILES], down[NPILES];
    uint8_t sp, found; /* next stock card; suits lifted off */
} SState;

typedef struct {
    uint64_t nodes, max_nodes;
    double deadline;
    volatile const uint8_t *stop;
    int stopped, truncated, quick;
    int staged; /* the staged pass: runs through spaces too, no DEAL (gen_moves) */
    int stage_branch, stage_spread; /* the staged pass's setting (StageSetting) */
    uint8_t stock[MAXSTOCK];
    int slen;
    KeySet seen;
    int root_down, best; /* best: the most progress of a position made (note_progress) */
    int depth;
    SMove path[MAXDEPTH];
    SState st[MAXDEPTH + 1];
    SMove moves[MAXDEPTH + 1][MAXMOVES];
} Ctx;

static uint64_t ZP[2][MAXPILE][52], ZDOWN[2][MAXPILE + 1], ZIDX[2][NPILES], ZS[2][MAXSTOCK + 1];

static inline int rank_of(int c) { return c % 13 + 1; }

static void key_of(const Ctx *c, const SState *s, uint64_t *a, uint64_t *b)
{
    int ordered = s->sp < c->slen;
    uint64_t h[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < NPILES; i++) {
            uint64_t p = ZDOWN[w][s->down[i]];
            for (int j = 0; j < s->n[i]; j++)
                p += ZP[w][j][s->card[i][j]];
            h[w] += mix64(p + (ordered ? ZIDX[w][i] : (uint64_t)w));
        }
        h[w] ^= ZS[w][c->slen - s->sp];
    }
    *a = h[0];
    *b = h[1] | 1;
}

/* How many top cards of pile i make its unit (face up, one suit in sequence), as the engine. */
static int unit_length(const SState *s, int i)
{
    int n = 1, len = s->n[i], up = len - s->down[i];
    while (n < up) {
        int card = s->card[i][len - n];
        if (rank_of(card) == 13 || s->card[i][len - n - 1] != card + 1)
            break;
        n++;
    }
    return n;
}

static int gen_moves(const Ctx *c, const SState *s, SMove *out)
{
    SMove tmp[MAXMOVES];
    uint8_t cls_of[MAXMOVES];
    int nt = 0, nspaces = 0;
    int spaces[NPILES];
    for (int j = 0; j < NPILES; j++)
        if (s->n[j] == 0)
            spaces[nspaces++] = j;
    int has_stock = s->sp < c->slen;
    int ntargets = has_stock || nspaces == 0 ? nspaces : 1;
    for (int i = 0; i < NPILES; i++) {
        int n = s->n[i];
        if (!n)
            continue;
        int u = unit_length(s, i);
        for (int k = 1; k <= u; k++) {
            int x = s->card[i][n - k], whole = k == u, rest = n - k;
            int reveals = whole && rest == s->down[i] && rest > 0;
            int empties = rest == 0;
            int below = rest > s->down[i] ? s->card[i][rest - 1] : -1;
            int natural = below >= 0 && rank_of(below) == rank_of(x) + 1;
            for (int j = 0; j < NPILES; j++) {
                if (j == i || !s->n[j])
                    continue;
                int top = s->card[j][s->n[j] - 1];
                if (rank_of(top) != rank_of(x) + 1)
                    continue;
                int cls;
                if (top == x + 1 && below != x + 1)
                    cls = P_SUIT;
                else if (reveals)
                    cls = P_TURN;
                else if (empties)
                    cls = P_EMPTY;
                else if (whole && !natural)
                    cls = P_FREE;
                else
                    cls = P_REST;
                if (c->quick && cls == P_REST)
                    continue;
                if (nt < MAXMOVES) {
                    tmp[nt] = (SMove){(int8_t)i, (uint8_t)j, (int8_t)k};
                    cls_of[nt++] = (uint8_t)cls;
                }
            }
            if (empties && !has_stock)
                continue; /* a whole pile into a space: the same position */
            for (int q = 0; q < ntargets; q++) {
                int cls = reveals || (whole && !natural && !empties) ? P_SPACE : P_REST;
                if (c->quick && cls == P_REST)
                    continue;
                if (nt < MAXMOVES) {
                    tmp[nt] = (SMove){(int8_t)i, (uint8_t)spaces[q], (int8_t)k};
                    cls_of[nt++] = (uint8_t)cls;
                }
            }
        }
    }
    for (int i = 0; c->staged && nspaces > 0 && i < NPILES; i++) {
        /* A run of m >= 2 units, each on a card one rank higher than its foot, goes onto a pile
         * whose top is one rank above the run's foot when m - 1 spaces can hold the units
         * above the last (run_moves): one move, where one unit at a time would first fill a
         * space (a poorer position) and need the DEAL-less stage to come back. */
        int n = s->n[i], k = n ? unit_length(s, i) : 0;
        for (int m = 2; n && m <= nspaces + 1 && n - k > s->down[i]; m++) {
            int foot = s->card[i][n - k], below = s->card[i][n - k - 1];
            if (rank_of(below) != rank_of(foot) + 1)
                break;
            k++;
            while (n - k > s->down[i] && s->card[i][n - k - 1] == s->card[i][n - k] + 1 && rank_of(s->card[i][n - k]) != 13)
                k++;
            int low = s->card[i][n - k];
            for (int j = 0; j < NPILES; j++)
                if (j != i && s->n[j] && rank_of(s->card[j][s->n[j] - 1]) == rank_of(low) + 1 && nt < MAXMOVES) {
                    tmp[nt] = (SMove){(int8_t)i, (uint8_t)j, (int8_t)-k};
                    cls_of[nt++] = P_FREE;
                }
        }
    }
    if (has_stock && nspaces == 0 && !c->staged && nt < MAXMOVES) {
        tmp[nt] = (SMove){-1, 0, 0};
        cls_of[nt++] = P_DEAL;
    }
    int k = 0;
    for (int cls = 0; cls < NCLASSES; cls++)
        for (int q = 0; q < nt; q++)
            if (cls_of[q] == cls)
                out[k++] = tmp[q];
    return k;
}

static inline void turn_up(SState *s, int i)
{
    if (s->n[i] > 0 && s->down[i] >= s->n[i])
        s->down[i] = (uint8_t)(s->n[i] - 1);
}

/* A full suit, K deepest and A on top, on top of pile j leaves it; the card under turns up. */
static void lift_off(SState *s, int j)
{
    int n = s->n[j];
    if (n - s->down[j] < SUITLEN)
        return;
    int ace = s->card[j][n - 1];
    if (rank_of(ace) != 1)
        return;
    for (int k = 1; k < SUITLEN; k++)
        if (s->card[j][n - 1 - k] != ace + k)
            return;
    s->n[j] = (uint8_t)(n - SUITLEN);
    s->found++;
    turn_up(s, j);
}

static void apply(const Ctx *c, SState *s, const SMove *mv)
{
    if (mv->src < 0) {
        int n = c->slen - s->sp < NPILES ? c->slen - s->sp : NPILES;
        for (int j = 0; j < n; j++)
            s->card[j][s->n[j]++] = c->stock[s->sp + j];
        s->sp = (uint8_t)(s->sp + n);
        for (int j = 0; j < n; j++)
            lift_off(s, j);
        return;
    }
    int src = mv->src, dst = mv->dst, count = abs(mv->count);
    memcpy(&s->card[dst][s->n[dst]], &s->card[src][s->n[src] - count], (size_t)count);
    s->n[dst] = (uint8_t)(s->n[dst] + count);
    s->n[src] = (uint8_t)(s->n[src] - count);
    turn_up(s, src);
    lift_off(s, dst);
}

/* A move past the room of a pile (MAXPILE) is not searched: only hand-made positions come near. */
static int fits(const Ctx *c, const SState *s, const SMove *mv)
{
    if (mv->src < 0) {
        for (int j = 0; j < NPILES; j++)
            if (s->n[j] >= MAXPILE)
                return 0;
        return 1;
    }
    return s->n[mv->dst] + abs(mv->count) <= MAXPILE;
}

static int is_won(const Ctx *c, const SState *s)
{
    if (s->sp < c->slen)
        return 0;
    for (int i = 0; i < NPILES; i++)
        if (s->n[i])
            return 0;
    return 1;
}

/* One more position made: 1 when the budget, the clock or the stop flag ends the pass. */
static int count_node(Ctx *c)
{
    c->nodes++;
    if (c->max_nodes && c->nodes > c->max_nodes)
        return 1;
    if ((c->nodes & 1023) == 0 &&
        ((c->stop != NULL && *c->stop) || (c->deadline > 0 && now_seconds() > c->deadline))) {
        c->stopped = 1;
        return 1;
    }
    return 0;
}

/* How far play got in a position: cards in the suits lifted off plus cards turned up since the
 * root. The sampled Hint scores a world its search left undecided by the best of these (as
 * Klondike's progress_of); the search itself never reads it. */
static void note_progress(Ctx *c, const SState *s)
{
    int p = SUITLEN * s->found + c->root_down;
    for (int i = 0; i < NPILES; i++)
        p -= s->down[i];
    if (p > c->best)
        c->best = p;
}

#endif
