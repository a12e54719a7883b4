/* What the row core's three searches share (_csolver.c includes it first, after _ccommon.h):
 * the sizes, the match table and the Zobrist keys (made by the module's init), the node budget
 * and the restart schedule. Every function is static. */
#ifndef ACCORDION_ROW_CROW_H
#define ACCORDION_ROW_CROW_H

#define NCARDS 52
#define MAXROW 128
/* The dead-state tables stop growing at 8 M slots (128 MB); past that they only forget work. */
#define MAX_TABLE_SLOTS ((size_t)1 << 23)

/* A subtree's results besides _ccommon.h's R_DEAD, R_WIN and R_STOP (the caller's budget: nodes,
 * time or the stop flag). */
#define R_ABORT 3 /* this attempt's node limit */

static uint8_t MATCH[NCARDS][NCARDS];

static uint64_t ZOBRIST[MAXROW][NCARDS];

/* ---- the budget and restart bookkeeping shared by the searches ---- */

typedef struct {
    uint64_t nodes;       /* every node of every attempt */
    uint64_t max_nodes;   /* 0: no limit */
    double deadline;      /* 0: no limit */
    volatile const uint8_t *stop; /* the caller's stop flag, or NULL */
    uint64_t anodes;      /* nodes of this attempt */
    uint64_t alimit;      /* this attempt's limit */
    int stopped;
    int noisy;            /* a restart: the move order is shaken by rng */
    uint64_t rng;         /* SplitMix64 state of the restart noise, seeded by the attempt's number */
} Budget;

/* Count a node; R_STOP / R_ABORT when a limit is passed, else -1. */
static inline int count_node(Budget *b)
{
    b->nodes++;
    b->anodes++;
    if (b->max_nodes && b->nodes > b->max_nodes) {
        b->stopped = 1;
        return R_STOP;
    }
    if ((b->nodes & 1023) == 0 &&
        ((b->stop != NULL && *b->stop) || (b->deadline > 0 && now_seconds() > b->deadline))) {
        b->stopped = 1;
        return R_STOP;
    }
    if (b->anodes > b->alimit)
        return R_ABORT;
    return -1;
}

/* A row argument (a buffer of min_len..MAXROW cards) into `out`, the buffer released: its length,
 * or -1 with ValueError set (`bounds`, the message, says what a row may be, or cards_valid's). */
static int read_row(Py_buffer *buf, Py_ssize_t min_len, const char *bounds, uint8_t *out)
{
    Py_ssize_t n = buf->len;
    if (n > MAXROW || n < min_len) {
        PyBuffer_Release(buf);
        PyErr_SetString(PyExc_ValueError, bounds);
        return -1;
    }
    memcpy(out, buf->buf, (size_t)n);
    PyBuffer_Release(buf);
    return cards_valid(out, n) ? (int)n : -1;
}

/* The restart schedule shared with the Python path. */
#define FIRST_LIMIT 500ULL
static uint64_t next_limit(uint64_t limit) { return limit + limit / 32; }

/* A search's attempts from its root (a row of n): the first limited to FIRST_LIMIT positions
 * (without restarts, to none), each next one to next_limit of the one before, its move order
 * shaken by noise seeded by its number, until one ends other than at its limit (R_ABORT).
 * `attempt` searches once from the root; the last attempt's result. */
static int run_attempts(Budget *b, int restarts, int (*attempt)(void *c, const void *root, int n), void *c,
                        const void *root, int n)
{
    uint64_t limit = restarts ? FIRST_LIMIT : UINT64_MAX;
    for (int number = 0;; number++) {
        b->anodes = 0;
        b->alimit = limit;
        b->noisy = number > 0;
        b->rng = (uint64_t)number;
        int r = attempt(c, root, n);
        if (r != R_ABORT)
            return r;
        limit = next_limit(limit);
    }
}

#endif
