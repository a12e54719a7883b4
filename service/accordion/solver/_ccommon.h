/*
 * Helpers shared by the compiled solver cores (_csolver.c, _cklondike.c): the clock, the
 * caller's stop flag, a growable set of 128-bit keys and SplitMix64. Every function is
 * static: each extension gets its own copy.
 */
#ifndef ACCORDION_SOLVER_COMMON_H
#define ACCORDION_SOLVER_COMMON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The stop flag argument: None, or a writable buffer of at least one byte (a bytearray).
 * On success *view holds the export (release it with release_stop) and *flag points at its
 * first byte, or is NULL for None. */
static int get_stop(PyObject *obj, Py_buffer *view, volatile const uint8_t **flag)
{
    *flag = NULL;
    view->obj = NULL;
    if (obj == NULL || obj == Py_None)
        return 1;
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE) < 0)
        return 0;
    if (view->len < 1) {
        PyBuffer_Release(view);
        view->obj = NULL;
        PyErr_SetString(PyExc_ValueError, "stop is a writable buffer of at least one byte");
        return 0;
    }
    *flag = (volatile const uint8_t *)view->buf;
    return 1;
}

static void release_stop(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* ---- a growable set of 128-bit keys (open addressing, linear probing) ---- */

typedef struct {
    uint64_t *keys; /* 2 words a slot; a slot is empty when both words are 0 */
    size_t cap;     /* slots, a power of two */
    size_t used;
    size_t max_cap; /* never grows past this; further inserts are dropped */
} KeySet;

static int ks_init(KeySet *s, size_t cap, size_t max_cap)
{
    s->keys = (uint64_t *)calloc(cap * 2, sizeof(uint64_t));
    s->cap = cap;
    s->used = 0;
    s->max_cap = max_cap;
    return s->keys != NULL;
}

static void ks_free(KeySet *s)
{
    free(s->keys);
    s->keys = NULL;
}

static inline size_t ks_slot(uint64_t a, uint64_t b, size_t mask)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 29;
    return (size_t)h & mask;
}

static int ks_has(const KeySet *s, uint64_t a, uint64_t b)
{
    size_t mask = s->cap - 1, i = ks_slot(a, b, mask);
    for (;;) {
        const uint64_t *k = s->keys + 2 * i;
        if (k[0] == a && k[1] == b)
            return 1;
        if (k[0] == 0 && k[1] == 0)
            return 0;
        i = (i + 1) & mask;
    }
}

static void ks_raw_add(uint64_t *keys, size_t cap, uint64_t a, uint64_t b)
{
    size_t mask = cap - 1, i = ks_slot(a, b, mask);
    for (;;) {
        uint64_t *k = keys + 2 * i;
        if (k[0] == a && k[1] == b)
            return;
        if (k[0] == 0 && k[1] == 0) {
            k[0] = a;
            k[1] = b;
            return;
        }
        i = (i + 1) & mask;
    }
}

static void ks_add(KeySet *s, uint64_t a, uint64_t b)
{
    if ((s->used + 1) * 2 > s->cap) {
        if (s->cap * 2 > s->max_cap)
            return; /* full: the table only saves work, so dropping a key is safe */
        size_t ncap = s->cap * 2;
        uint64_t *nk = (uint64_t *)calloc(ncap * 2, sizeof(uint64_t));
        if (nk == NULL)
            return;
        for (size_t i = 0; i < s->cap; i++) {
            uint64_t *k = s->keys + 2 * i;
            if (k[0] || k[1])
                ks_raw_add(nk, ncap, k[0], k[1]);
        }
        free(s->keys);
        s->keys = nk;
        s->cap = ncap;
    }
    size_t before_mask = s->cap - 1, i = ks_slot(a, b, before_mask);
    for (;;) {
        uint64_t *k = s->keys + 2 * i;
        if (k[0] == a && k[1] == b)
            return;
        if (k[0] == 0 && k[1] == 0) {
            k[0] = a;
            k[1] = b;
            s->used++;
            return;
        }
        i = (i + 1) & before_mask;
    }
}

/* ---- the generator for restart noise: SplitMix64, as the engine's ---- */

static inline uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

#endif
