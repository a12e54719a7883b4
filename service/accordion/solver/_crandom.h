/* SplitMix64, as the engine's (engine/rng.py): the generator for restart noise and the Zobrist
 * keys of the C cores. Included by _ccommon.h; every function is static. */
#ifndef ACCORDION_SOLVER_RANDOM_H
#define ACCORDION_SOLVER_RANDOM_H
#include <stddef.h>
#include <stdint.h>

/* SplitMix64's finaliser: every bit of the word spread over all of it (the game cores also mix
 * each pile's Zobrist sum with it before they add the piles up). */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t splitmix(uint64_t *state)
{
    return mix64(*state += 0x9E3779B97F4A7C15ULL);
}

/* Restart noise over a position's `nm` moves of `size` bytes each (Emperor's and Klondike's
 * depth-first passes, as their Python twins' dfs): half the time another move goes first, the
 * rest keeping their order. One draw of the generator when there are two moves or more. */
static inline void shake_first_move(uint64_t *rng, void *moves, int nm, size_t size)
{
    if (nm < 2)
        return;
    uint64_t z = splitmix(rng);
    if (z & 1) {
        char *first = (char *)moves, *other = first + (size_t)((z >> 1) % (uint64_t)nm) * size;
        for (size_t k = 0; k < size; k++) {
            char byte = first[k];
            first[k] = other[k];
            other[k] = byte;
        }
    }
}

/* The next `n` words of the generator into keys[0..n-1], in order. */
static inline void zobrist_fill(uint64_t *keys, size_t n, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++)
        keys[i] = splitmix(seed);
}

/* Every word of the array `table` (a Zobrist table, or a row of one: an array, not a pointer)
 * from the generator, in the order of nested loops over its indices, the last one fastest. A
 * macro, for the array's size. */
#define ZOBRIST_FILL(table, seed) zobrist_fill((uint64_t *)(table), sizeof(table) / sizeof(uint64_t), (seed))

#endif
