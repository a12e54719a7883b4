/* _cstreets' best-first pass (included by _cstreets.c after _cstreets_dfs.h: it generates the
 * attempts' moves) */
#ifndef ACCORDION_CSTREETS_BF_H
#define ACCORDION_CSTREETS_BF_H

/* ---- the best-first pass (docs/solver.md, "Best-first pass") ---- */

/* A position the best-first pass has reached: the piles one after another, the pile sizes, the
 * foundations, the card the move into it moved (NO_CARD at the root), and how it was reached. */
typedef struct {
    uint8_t card[52];
    uint8_t n[MAXP];
    uint8_t found[4];
    uint8_t last, src, dst;
    uint32_t parent;
} BState;


/* How far the position looks from a win, lower first: cards not up, cards sitting on a card of
 * their rank or lower (each must move before the piles descend), cards above the next card of
 * each suit (they must move before it goes up), spaces (a space takes any card) counting against. */
static int bf_score(const Ctx *c)
{
    int up = 0, blockers = 0, spaces = 0;
    for (int t = 0; t < 4; t++) { /* the next card of each suit, found where it lies */
        up += c->found[t];
        if (c->found[t] < 13) {
            int y = t * 13 + c->found[t];
            blockers += c->n[c->pile_of[y]] - 1 - c->idx_of[y];
        }
    }
    for (int i = 0; i < c->npiles; i++)
        spaces += c->n[i] == 0;
    return 1000 + 10 * (52 - up) + 6 * c->rises + 3 * blockers - 10 * spaces;
}

static void bf_store(const Ctx *c, BState *s)
{
    int k = 0;
    for (int i = 0; i < c->npiles; i++) {
        s->n[i] = c->n[i];
        for (int j = 0; j < c->n[i]; j++)
            s->card[k++] = c->card[i][j];
    }
    memcpy(s->found, c->found, 4);
}

/* Makes the current position (a position the pass has stored) into s: only the piles that
 * differ are made again (the pass mostly goes on from a child of the position before), all
 * emptied before any is filled (a card may change piles: the set of cards in the piles and
 * where each lies must end as s has them). */
static void bf_load(Ctx *c, const BState *s)
{
    const uint8_t *from[MAXP];
    unsigned redo = 0;
    const uint8_t *cards = s->card;
    for (int i = 0; i < c->npiles; cards += s->n[i], i++) {
        from[i] = cards;
        if (s->n[i] == c->n[i] && memcmp(c->card[i], cards, s->n[i]) == 0)
            continue;
        redo |= 1u << i;
        while (c->n[i])
            pop_card(c, i);
    }
    for (int i = 0; i < c->npiles; i++)
        if (redo >> i & 1) {
            for (int j = 0; j < s->n[i]; j++)
                push_card(c, i, from[i][j]);
            rekey(c, i);
        }
    memcpy(c->found, s->found, 4);
}

/* The win that the best-first pass reached: the moves from the root to state `parent`, then mv. */
static int bf_line(Ctx *c, const BState *st, uint32_t parent, SMove mv)
{
    int len = 1;
    for (uint32_t i = parent; i != 0; i = st[i].parent)
        len++;
    free(c->line);
    c->line = (SMove *)malloc((size_t)len * sizeof(SMove));
    if (c->line == NULL)
        return 0;
    c->nline = len;
    c->line[len - 1] = mv;
    int q = len - 2;
    for (uint32_t i = parent; i != 0; i = st[i].parent, q--) {
        c->line[q].src = st[i].src;
        c->line[q].dst = st[i].dst;
    }
    return 1;
}

/* Greedy best-first search from the root: the position of least bf_score is expanded next (the
 * latest reached among equals), with the moves gen_moves gives (the same cuts as the depth-first
 * attempts, so a pass that runs out of positions has searched everything reachable and proves the
 * loss). Counts positions as enter() does and stops after `allowance` of them: R_WIN (the line in
 * c->line), R_DEAD (exhausted), R_STOP. The current position is left anywhere. */
static int best_first(Ctx *c, uint64_t allowance)
{
    uint64_t end = c->nodes + allowance;
    size_t cap = 1024, nst = 0, nheap = 0;
    BState *st = (BState *)malloc(cap * sizeof(BState));
    HeapItem *heap = (HeapItem *)malloc(cap * sizeof(HeapItem));
    KeySet seen;
    int r = R_STOP, have_seen = ks_init(&seen, (size_t)1 << 14, MAX_SLOTS, 1);
    SMove moves[MAXMOVES];
    MoveKey keys[MAXMOVES], kept = {{0, 0}, {0, 0}};
    uint64_t kept_sum[2], ka[MAXMOVES], kb[MAXMOVES];
    if (st == NULL || heap == NULL || !have_seen)
        goto done; /* out of memory: the pass gives up, the attempts go on */
    c->nodes++;    /* the root, as enter() counts it */
    if (c->max_nodes && c->nodes > c->max_nodes)
        goto done;
    if (is_won(c)) {
        r = R_WIN;
        c->nline = 0;
        goto done;
    }
    {
        uint64_t a, b;
        key_of(c, &a, &b);
        ks_add(&seen, a, b);
    }
    bf_store(c, &st[0]);
    st[0].last = NO_CARD;
    st[0].parent = 0;
    nst = 1;
    heap_push(heap, &nheap, (HeapItem){((uint64_t)bf_score(c) << 32) | 0xFFFFFFFFu, 0});
    while (nheap) {
        HeapItem it = heap_pop(heap, &nheap);
        bf_load(c, &st[it.idx]);
        int nm = gen_moves(c, moves, st[it.idx].last == NO_CARD ? -1 : st[it.idx].last);
        for (int q = 0; q < nm; q++) { /* the children's keys first, their slots fetched side by side */
            child_key(c, moves[q], &keys[q], &ka[q], &kb[q]);
            ks_prefetch(&seen, ka[q], kb[q]);
        }
        for (int q = 0; q < nm; q++) {
            int x = top(c, moves[q].src);
            do_keyed(c, moves[q], &keys[q], &kept, kept_sum);
            c->nodes++;
            if ((c->max_nodes && c->nodes > c->max_nodes) || c->nodes > end)
                goto done;
            if ((c->nodes & 1023) == 0 &&
                ((c->stop != NULL && *c->stop) || (c->deadline > 0 && now_seconds() > c->deadline))) {
                c->stopped = 1;
                goto done;
            }
            if (is_won(c)) {
                r = bf_line(c, st, it.idx, moves[q]) ? R_WIN : R_STOP;
                goto done;
            }
            if (!ks_has_or_add(&seen, ka[q], kb[q])) {
                if (c->frozen_test && frozen(c)) {
                    undo_keyed(c, moves[q], x, &kept, kept_sum);
                    continue; /* lost: not stored, never expanded */
                }
                if (nst == cap) {
                    cap *= 2;
                    BState *ns = (BState *)realloc(st, cap * sizeof(BState));
                    if (ns != NULL)
                        st = ns;
                    HeapItem *nh = (HeapItem *)realloc(heap, cap * sizeof(HeapItem));
                    if (nh != NULL)
                        heap = nh;
                    if (ns == NULL || nh == NULL)
                        goto done;
                }
                bf_store(c, &st[nst]);
                st[nst].last = (uint8_t)x;
                st[nst].src = moves[q].src;
                st[nst].dst = moves[q].dst;
                st[nst].parent = it.idx;
                heap_push(heap, &nheap, (HeapItem){((uint64_t)bf_score(c) << 32) | (0xFFFFFFFFu - (uint32_t)nst),
                                                   (uint32_t)nst});
                nst++;
            }
            undo_keyed(c, moves[q], x, &kept, kept_sum);
        }
    }
    r = R_DEAD;
done:
    if (have_seen)
        ks_free(&seen);
    free(st);
    free(heap);
    return r;
}

#endif
