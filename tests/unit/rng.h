/* rng.h - a deterministic xorshift64* generator for the unit tests: every run sees the same cases. */
#ifndef JT_RNG_H
#define JT_RNG_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static inline void
rng_seed(uint64_t seed)
{
	rng_state = seed ? seed : 1;
}

static inline uint64_t
rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

#endif
