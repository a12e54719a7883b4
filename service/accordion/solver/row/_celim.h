/* The eliminators (the row games that discard): the inner rules' exact interval programme
 * (elim_dp) and the depth-first search over subsets of the row (elim_solve: Concertina, Bayan,
 * and the inner rules for cross-checks). Included by _csolver.c after _crow.h; _pysolver.py's
 * elim_dp and elim_solve are its twins. */
#ifndef ACCORDION_ROW_CELIM_H
#define ACCORDION_ROW_CELIM_H

/* =====================================================================
 * Eliminators: the interval programme for the inner rules
 * ===================================================================== */

/*
 * W[a][b] (a < b, original positions): every card strictly between a and b can be
 * removed while a and b stay. The cards between only ever see neighbours inside
 * [a, b], so the interval is a game of its own; its last move takes the one or two
 * cards left between a and b, so a and b match and the pieces either side of those
 * cards are W intervals:
 *   W[a][a+1]  = 1
 *   W[a][b]    = MATCH(a, b) and (one and P[a][b]  or  two and some d: P[a][d] and W[d][b])
 *   P[a][d]    = some c in (a, d): W[a][c] and W[c][d]     (a, c, d left with c between)
 * The whole row is won iff W[0][n-1]: its ends never leave.
 */
typedef struct {
    int n;
    uint8_t W[MAXROW][MAXROW];
    uint8_t P[MAXROW][MAXROW];
    int16_t wc[MAXROW][MAXROW]; /* witness: the last move's first card (c), or -1 */
    int16_t wd[MAXROW][MAXROW]; /* the last move's second card, or -1 for a single */
    int16_t pc[MAXROW][MAXROW]; /* witness c of P */
} DP;

/* The programme over the row t of n cards (n >= 3) into dp, counting an interval a node into
 * *nodes_out: 1 when it stopped (max_nodes, max_seconds or the stop flag, read every 1024 nodes),
 * else 0 and dp->W[0][n - 1] says whether the row is won. */
static int elim_dp_fill(DP *dp, const uint8_t *t, int n, int one, int two, uint64_t max_nodes, double max_seconds,
                        volatile const uint8_t *stop, uint64_t *nodes_out)
{
    uint64_t nodes = 0;
    int stopped = 0;
    double deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    for (int a = 0; a + 1 < n; a++) {
        dp->W[a][a + 1] = 1;
        dp->wc[a][a + 1] = -1;
        dp->P[a][a + 1] = 0;
    }
    for (int len = 2; len < n && !stopped; len++) {
        for (int a = 0; a + len < n; a++) {
            int b = a + len;
            nodes++;
            if ((max_nodes && nodes > max_nodes) ||
                ((nodes & 1023) == 0 &&
                 ((stop != NULL && *stop) || (deadline > 0 && now_seconds() > deadline)))) {
                stopped = 1;
                break;
            }
            int pcw = -1;
            for (int c = a + 1; c < b; c++) {
                if (dp->W[a][c] && dp->W[c][b]) { pcw = c; break; }
            }
            dp->P[a][b] = pcw >= 0;
            dp->pc[a][b] = (int16_t)pcw;
            int w = 0, wc = -1, wd = -1;
            if (MATCH[t[a]][t[b]]) {
                if (one && pcw >= 0) {
                    w = 1; wc = pcw; wd = -1;
                } else if (two) {
                    for (int d = a + 2; d < b; d++) {
                        if (dp->P[a][d] && dp->W[d][b]) { w = 1; wc = dp->pc[a][d]; wd = d; break; }
                    }
                }
            }
            dp->W[a][b] = (uint8_t)w;
            dp->wc[a][b] = (int16_t)wc;
            dp->wd[a][b] = (int16_t)wd;
        }
    }
    *nodes_out = nodes;
    return stopped;
}

/* The line of a won programme: its witnesses replayed, (a, b) → solve (a, c), (c, d), (d, b),
 * then take c (and d); a move is the positions it removes, as they are when it is made. A new
 * list, or NULL after a Python error. */
static PyObject *elim_dp_line(const DP *dp, int n)
{
    PyObject *moves = PyList_New(0);
    if (moves == NULL)
        return NULL;
    int alive[MAXROW];
    for (int i = 0; i < n; i++) alive[i] = 1;
    int stack[4 * MAXROW + 8][3];
    int sp = 0;
    /* frames: kind 0 = solve (a, b); kind 1 = emit the removal of (a, b)'s witness */
    stack[sp][0] = 0; stack[sp][1] = 0; stack[sp][2] = n - 1; sp++;
    while (sp > 0) {
        sp--;
        int kind = stack[sp][0], a = stack[sp][1], b = stack[sp][2];
        if (b == a + 1)
            continue;
        int c = dp->wc[a][b], d = dp->wd[a][b];
        if (kind == 1) {
            int pos = 0;
            for (int i = 0; i < c; i++) pos += alive[i];
            if (!append_new(moves, d < 0 ? Py_BuildValue("(i)", pos) : Py_BuildValue("(ii)", pos, pos + 1))) {
                Py_DECREF(moves);
                return NULL;
            }
            alive[c] = 0;
            if (d >= 0) alive[d] = 0;
            continue;
        }
        /* pushed in reverse: the pieces left to right, then the removal */
        stack[sp][0] = 1; stack[sp][1] = a; stack[sp][2] = b; sp++;
        if (d < 0) {
            stack[sp][0] = 0; stack[sp][1] = c; stack[sp][2] = b; sp++;
            stack[sp][0] = 0; stack[sp][1] = a; stack[sp][2] = c; sp++;
        } else {
            stack[sp][0] = 0; stack[sp][1] = d; stack[sp][2] = b; sp++;
            stack[sp][0] = 0; stack[sp][1] = c; stack[sp][2] = d; sp++;
            stack[sp][0] = 0; stack[sp][1] = a; stack[sp][2] = c; sp++;
        }
    }
    return moves;
}

/* =====================================================================
 * Eliminators by search: subsets of the row
 * ===================================================================== */

#define MODE_INNER 0   /* the cards between a matching pair leave */
#define MODE_OUTER 1   /* Concertina: the matching pair leaves, the middle stays */
#define MODE_PAIRS 2   /* Bayan: two matching cards 1 or 3 apart both leave */

typedef struct {
    int mode, one, two, win_cards;
    uint8_t card[MAXROW]; /* the original row */
    Budget b;
    KeySet dead;
    int path[MAXROW][3]; /* per depth: how many positions, first, second */
    int depth_won;
} ECtx;

typedef struct {
    int p, q; /* current positions removed: p, and q (or -1) */
    int key;
} EMove;

/* Legal moves in the engine's order. idx: original positions of the cards in play. */
static int elim_moves(const ECtx *c, const int *idx, int n, EMove *out)
{
    int k = 0;
    const uint8_t *card = c->card;
    if (c->mode == MODE_PAIRS) {
        for (int i = 0; i + 1 < n; i++) {
            const uint8_t *m = MATCH[card[idx[i]]];
            if (m[card[idx[i + 1]]]) { out[k].p = i; out[k].q = i + 1; k++; }
            if (i + 3 < n && m[card[idx[i + 3]]]) { out[k].p = i; out[k].q = i + 3; k++; }
        }
        return k;
    }
    for (int i = 0; i + 2 < n; i++) {
        const uint8_t *m = MATCH[card[idx[i]]];
        if (c->one && m[card[idx[i + 2]]]) {
            if (c->mode == MODE_INNER) { out[k].p = i + 1; out[k].q = -1; }
            else { out[k].p = i; out[k].q = i + 2; }
            k++;
        }
        if (c->two && i + 3 < n && m[card[idx[i + 3]]]) {
            if (c->mode == MODE_INNER) { out[k].p = i + 1; out[k].q = i + 2; }
            else { out[k].p = i; out[k].q = i + 3; }
            k++;
        }
    }
    return k;
}

static int edfs(ECtx *c, const int *idx, int n, int depth)
{
    int r = count_node(&c->b);
    if (r >= 0)
        return r;
    if (n <= c->win_cards) {
        c->depth_won = depth;
        return R_WIN;
    }
    uint64_t k0 = 0, k1 = 0;
    int rc[13] = {0}, sc[4] = {0};
    for (int i = 0; i < n; i++) {
        int p = idx[i];
        if (p < 64) k0 |= 1ULL << p; else k1 |= 1ULL << (p - 64);
        uint8_t x = c->card[p];
        rc[x % 13]++;
        sc[x / 13]++;
    }
    k1 |= 1ULL << 63;
    if (ks_has(&c->dead, k0, k1))
        return R_DEAD;
    if (c->mode != MODE_INNER) {
        /* In these games a card leaves only with a matching partner: count those without one. */
        int stuck = 0;
        for (int i = 0; i < n; i++) {
            uint8_t x = c->card[idx[i]];
            if (rc[x % 13] == 1 && sc[x / 13] == 1)
                stuck++;
        }
        if (stuck > c->win_cards) {
            ks_add(&c->dead, k0, k1);
            return R_DEAD;
        }
    } else if (!MATCH[c->card[idx[0]]][c->card[idx[n - 1]]]) {
        /* The ends never leave and the last move needs them to match. */
        ks_add(&c->dead, k0, k1);
        return R_DEAD;
    }
    EMove mv[2 * MAXROW];
    int k = elim_moves(c, idx, n, mv);
    for (int j = 0; j < k; j++) {
        int key = j;
        if (c->b.noisy)
            key = (int)(splitmix(&c->b.rng) & 0xFFFFF);
        mv[j].key = key;
    }
    if (c->b.noisy) {
        for (int i = 1; i < k; i++) {
            EMove x = mv[i];
            int j = i - 1;
            while (j >= 0 && mv[j].key > x.key) { mv[j + 1] = mv[j]; j--; }
            mv[j + 1] = x;
        }
    }
    int child[MAXROW];
    for (int j = 0; j < k; j++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (i == mv[j].p || i == mv[j].q)
                continue;
            child[m++] = idx[i];
        }
        c->path[depth][0] = mv[j].q < 0 ? 1 : 2;
        c->path[depth][1] = mv[j].p;
        c->path[depth][2] = mv[j].q;
        r = edfs(c, child, m, depth + 1);
        if (r != R_DEAD)
            return r;
    }
    ks_add(&c->dead, k0, k1);
    return R_DEAD;
}

static int elim_attempt(void *c, const void *idx, int n) { return edfs((ECtx *)c, (const int *)idx, n, 0); }

#endif
