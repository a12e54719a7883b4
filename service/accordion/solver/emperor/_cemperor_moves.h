/*
 * _cemperor_moves.h: the moves the Emperor search tries, in its order, with the cuts that keep
 * its LOST a proof (docs/solver.md, "Emperor": compelled Aces, safe foundation moves, the talon
 * as macro moves, the first space only) and the quick passes' cut that does not. Part of the
 * one core _cemperor.c, after _cemperor_position.h.
 */
#ifndef CEMPEROR_MOVES_H
#define CEMPEROR_MOVES_H

/* Nothing could ever be built on x (every opposite-colour card one lower, both decks', is
 * up, and nothing comes back from a foundation): x does nothing on the tableau that it does
 * not do better on its foundation. A 2 carries only an Ace, and Aces are compelled up. */
static int safe(const EState *s, int x)
{
    int r = rank_of(x), su = suit_of(x);
    if (r <= 2)
        return 1;
    for (int t = 0; t < 4; t++) {
        if (red_suit(t) != red_suit(su)) {
            int lo = s->found[t] < s->found[t + 4] ? s->found[t] : s->found[t + 4];
            if (lo < r - 1)
                return 0;
        }
    }
    return 1;
}

/* The talon cards playable now: the waste's top, then each stock card a DRAW brings up, up
 * to the first Ace (an Ace on the waste is compelled, so nothing is drawn past it). */
static int reach(const EState *s, uint8_t *idx)
{
    int k = 0;
    if (s->cur > 0)
        idx[k++] = (uint8_t)(s->cur - 1);
    for (int p = s->cur; p < s->tlen; p++) {
        idx[k++] = (uint8_t)p;
        if (rank_of(s->talon[p]) == 1)
            break;
    }
    return k;
}

static int can_receive(const EState *s, int x, int skip, const uint8_t *idx, int nt)
{
    for (int q = 0; q < nt; q++)
        if (builds_on(s->talon[idx[q]], x))
            return 1;
    for (int t = 0; t < NPILES; t++)
        if (t != skip && s->n[t] && builds_on(s->card[t][s->n[t] - 1], x))
            return 1;
    return 0;
}

static int first_empty(const EState *s)
{
    for (int i = 0; i < NPILES; i++)
        if (s->n[i] == 0)
            return i;
    return -1;
}

static inline void add(EMove *m, int *k, int kind, int src, int dst, int tidx)
{
    if (*k >= MAXMOVES)
        return;
    EMove *x = &m[(*k)++];
    x->kind = (uint8_t)kind;
    x->src = (uint8_t)src;
    x->dst = (uint8_t)dst;
    x->tidx = (uint8_t)tidx;
}

/* x onto every pile that takes it (not its own, src; -1 for the talon), then into the first space. */
static void onto(const EState *s, int x, int src, EMove *m, int *k, int kind, int tidx)
{
    for (int t = 0; t < NPILES; t++)
        if (t != src && s->n[t] && builds_on(x, s->card[t][s->n[t] - 1]))
            add(m, k, kind, src < 0 ? 0 : src, t, tidx);
    int e = first_empty(s);
    if (e >= 0)
        add(m, k, kind, src < 0 ? 0 : src, e, tidx);
}

static int gen_moves(const Ctx *c, const EState *s, EMove *m)
{
    int k = 0;
    for (int i = 0; i < NPILES; i++) /* compelled Aces */
        if (s->n[i] && rank_of(s->card[i][s->n[i] - 1]) == 1) {
            add(m, &k, M_TAB_FOUND, i, 0, 0);
            return k;
        }
    if (s->cur > 0 && rank_of(s->talon[s->cur - 1]) == 1) {
        add(m, &k, M_TAL_FOUND, 0, 0, s->cur - 1);
        return k;
    }
    for (int i = 0; i < NPILES; i++)
        if (s->n[i]) {
            int x = s->card[i][s->n[i] - 1];
            if (home(s, x) >= 0 && safe(s, x)) {
                add(m, &k, M_TAB_FOUND, i, 0, 0);
                return k;
            }
        }
    if (s->cur > 0) {
        int x = s->talon[s->cur - 1];
        if (home(s, x) >= 0 && safe(s, x)) {
            add(m, &k, M_TAL_FOUND, 0, 0, s->cur - 1);
            return k;
        }
    }
    /* 1. tableau tops to the foundations */
    for (int i = 0; i < NPILES; i++)
        if (s->n[i] && home(s, s->card[i][s->n[i] - 1]) >= 0)
            add(m, &k, M_TAB_FOUND, i, 0, 0);
    /* 2. tops that turn a card, the pile with most face down first */
    int maxdown = 0;
    for (int i = 0; i < NPILES; i++)
        if (s->down[i] > maxdown)
            maxdown = s->down[i];
    for (int dn = maxdown; dn >= 1; dn--)
        for (int i = 0; i < NPILES; i++)
            if (s->down[i] == dn && s->n[i] == dn + 1)
                onto(s, s->card[i][dn], i, m, &k, M_TAB_TAB, 0);
    /* 3. talon cards to the foundations, then onto the piles */
    uint8_t idx[MAXTALON + 1];
    int nt = reach(s, idx);
    for (int q = 0; q < nt; q++)
        if (home(s, s->talon[idx[q]]) >= 0)
            add(m, &k, M_TAL_FOUND, 0, 0, idx[q]);
    for (int q = 0; q < nt; q++)
        if (rank_of(s->talon[idx[q]]) != 1) /* a drawn Ace is compelled: it only goes up */
            onto(s, s->talon[idx[q]], -1, m, &k, M_TAL_TAB, idx[q]);
    /* 4. lone cards onto other piles (they leave a space) */
    for (int i = 0; i < NPILES; i++)
        if (s->n[i] == 1 && s->down[i] == 0)
            for (int t = 0; t < NPILES; t++)
                if (t != i && s->n[t] && builds_on(s->card[i][0], s->card[t][s->n[t] - 1]))
                    add(m, &k, M_TAB_TAB, i, t, 0);
    /* 5. tops off face-up cards */
    for (int i = 0; i < NPILES; i++) {
        int n = s->n[i];
        if (n - s->down[i] < 2)
            continue;
        if (c->cut) { /* only to use the card uncovered at once */
            int under = s->card[i][n - 2];
            if (home(s, under) < 0 && !can_receive(s, under, i, idx, nt))
                continue;
        }
        onto(s, s->card[i][n - 1], i, m, &k, M_TAB_TAB, 0);
    }
    return k;
}

#endif
