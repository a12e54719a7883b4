/*
 * Helpers shared by the compiled solver cores (_csolver.c, _cklondike.c, ...): the clock, the
 * caller's stop flag and progress byte, and the steps every solve call takes alike: reading a
 * position's piles, foundations and cards, opening and closing its table and stop flag, and its
 * outcome codes and answer tuple. It includes the rest of what they share, one header a topic:
 * _ckeyset.h (a growable set of 128-bit keys: the table of positions seen), _crandom.h
 * (SplitMix64: restart noise, Zobrist tables) and _cfrontier.h (the best-first passes' heap, the
 * beam pass). _cschedule.h, the pass scheduler, is included by the cores that run in passes.
 * Every function is static: each extension gets its own copy.
 */
#ifndef ACCORDION_SOLVER_COMMON_H
#define ACCORDION_SOLVER_COMMON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "_ckeyset.h"
#include "_crandom.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A byte the caller shares with a search (its stop flag, its progress byte): None, or a writable
 * buffer of at least one byte (a bytearray); `name` is the argument's, for the error. On success
 * *view holds the export (release it with release_stop), or view->obj is NULL for None. */
static int get_byte_buffer(PyObject *obj, const char *name, Py_buffer *view)
{
    view->obj = NULL;
    if (obj == NULL || obj == Py_None)
        return 1;
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE) < 0)
        return 0;
    if (view->len < 1) {
        PyBuffer_Release(view);
        view->obj = NULL;
        PyErr_Format(PyExc_ValueError, "%s is a writable buffer of at least one byte", name);
        return 0;
    }
    return 1;
}

/* The stop flag argument (get_byte_buffer): *flag points at its first byte, or is NULL for None;
 * another thread sets it to nonzero to stop the search. */
static int get_stop(PyObject *obj, Py_buffer *view, volatile const uint8_t **flag)
{
    *flag = NULL;
    if (!get_byte_buffer(obj, "stop", view))
        return 0;
    if (view->obj != NULL)
        *flag = (volatile const uint8_t *)view->buf;
    return 1;
}

static void release_stop(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* ---- a solve call: the position read, its start, its end and its answer to Python ---- */

/* Whether the n bytes are all cards (0..51); 0 with the exception set when not. */
static inline int cards_valid(const uint8_t *cards, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < n; j++)
        if (cards[j] >= 52) {
            PyErr_SetString(PyExc_ValueError, "a card is 0..51");
            return 0;
        }
    return 1;
}

/* A pile (bytes, bottom to top, at most max_cards) and its face-down count (an int within it)
 * into cards, *n and *down; 0 with the exception set when they are not that. The cards are the
 * caller's to check (cards_valid). */
static inline int read_pile(PyObject *pile, PyObject *down_count, int max_cards, uint8_t *cards, uint8_t *n,
                            uint8_t *down)
{
    long dn = PyLong_AsLong(down_count);
    if (!PyBytes_Check(pile) || PyBytes_GET_SIZE(pile) > max_cards || dn < 0 || dn > PyBytes_GET_SIZE(pile)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "a pile is bytes of at most %d cards, its face-down count within it",
                         max_cards);
        return 0;
    }
    *n = (uint8_t)PyBytes_GET_SIZE(pile);
    memcpy(cards, PyBytes_AS_STRING(pile), *n);
    *down = (uint8_t)dn;
    return 1;
}

/* The first n items of the list `found`, foundation heights (ints 0..13), into heights; 0 with
 * the exception set when they are not that. */
static inline int read_foundations(PyObject *found, int n, uint8_t *heights)
{
    for (int t = 0; t < n; t++) {
        long f = PyLong_AsLong(PyList_GET_ITEM(found, t));
        if (f < 0 || f > 13) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a foundation holds 0..13 cards");
            return 0;
        }
        heights[t] = (uint8_t)f;
    }
    return 1;
}

/* The outcome codes a solve hands back (_pysolver's UNKNOWN, WON, LOST, read by core.py). */
#define OUT_UNKNOWN 0
#define OUT_WON 1
#define OUT_LOST 2

/* What a pass (or a subtree of it) ends in. */
#define R_DEAD 0 /* no win below */
#define R_WIN 1
#define R_STOP 2 /* a budget, the clock or the stop flag */

/* The zones of a primitive move (src_zone, src, dst_zone, dst, count): Z_TAB, Z_FOUND, Z_STOCK,
 * Z_WASTE, numbered as engine/moves.py ZONE_CODES declares (a header generated from it). */
#include "_czones.h"

#include "_cfrontier.h"

/* The start of a solve: its table of positions (ks_init) and the caller's stop flag (get_stop).
 * 0 with the exception set, and nothing held, when either fails. */
static inline int open_search(KeySet *table, size_t cap, size_t max_cap, int huge, PyObject *stop_obj,
                              Py_buffer *stop_view, volatile const uint8_t **stop)
{
    if (!ks_init(table, cap, max_cap, huge)) {
        PyErr_NoMemory();
        return 0;
    }
    if (!get_stop(stop_obj, stop_view, stop)) {
        ks_free(table);
        return 0;
    }
    return 1;
}

/* The end of a solve's search: the stop flag released and the table freed. */
static inline void close_search(KeySet *table, Py_buffer *stop_view)
{
    release_stop(stop_view);
    ks_free(table);
}

/* The start of a solve that reports its progress (Klondike's, Spider's, Emperor's): open_search,
 * then the caller's progress byte (get_byte_buffer: None, or one writable byte). 0 with the
 * exception set, and nothing held, when either fails. */
static inline int open_search_progress(KeySet *table, size_t cap, size_t max_cap, int huge, PyObject *stop_obj,
                                       Py_buffer *stop_view, volatile const uint8_t **stop, PyObject *progress_obj,
                                       Py_buffer *progress_view)
{
    if (!open_search(table, cap, max_cap, huge, stop_obj, stop_view, stop))
        return 0;
    if (!get_byte_buffer(progress_obj, "progress", progress_view)) {
        close_search(table, stop_view);
        return 0;
    }
    return 1;
}

/* The end of such a solve's search: `progress` (the most progress of a position searched, written
 * once, after the search) into the caller's byte, which is released, then close_search. */
static inline void close_search_progress(KeySet *table, Py_buffer *stop_view, Py_buffer *progress_view, int progress)
{
    if (progress_view->obj != NULL) {
        *(uint8_t *)progress_view->buf = (uint8_t)progress;
        PyBuffer_Release(progress_view);
    }
    close_search(table, stop_view);
}

/* The list a solve's line goes into: a new empty list, or NULL with MemoryError set when its
 * search ran out of memory (`ok` cleared); solve_result then answers NULL. */
static inline PyObject *line_list(int ok)
{
    return ok ? PyList_New(0) : PyErr_NoMemory();
}

/* The outcome of a search: WON, else UNKNOWN when `unknown` (a search that did not see its whole
 * space, for a budget or a cut, proves nothing), else LOST. */
static inline int search_outcome(int won, int unknown)
{
    return won ? OUT_WON : unknown ? OUT_UNKNOWN : OUT_LOST;
}

/* Appends `item`, a new reference or NULL after a Python error, to `list`, which takes it over:
 * 0 on a Python error. */
static inline int append_new(PyObject *list, PyObject *item)
{
    int ok = item != NULL && PyList_Append(list, item) == 0;
    Py_XDECREF(item);
    return ok;
}

/* Appends the primitive move (src_zone, src, dst_zone, dst, count) to `out`: 0 on a Python error. */
static inline int push_move(PyObject *out, int src_zone, int src, int dst_zone, int dst, int count)
{
    return append_new(out, Py_BuildValue("(iiiii)", src_zone, src, dst_zone, dst, count));
}

/* A solve's answer: (outcome, moves, positions searched), `moves` taken over; NULL (the exception
 * set) when `moves` is NULL. */
static inline PyObject *solve_result(int outcome, PyObject *moves, uint64_t nodes)
{
    return moves == NULL ? NULL : Py_BuildValue("(iNK)", outcome, moves, (unsigned long long)nodes);
}

/* A core's module: its method table (each solve function with its arguments' docstring), its name
 * and docstring; single-phase, with no state of its own. Each extension has its own copy of this
 * function and of its definition, filled once, by the module's init. */
static PyObject *create_core_module(const char *name, const char *doc, PyMethodDef *methods)
{
    static struct PyModuleDef def = {PyModuleDef_HEAD_INIT};
    def.m_name = name;
    def.m_doc = doc;
    def.m_size = -1;
    def.m_methods = methods;
    return PyModule_Create(&def);
}

#endif
