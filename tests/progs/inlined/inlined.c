/* inlined.c - an allocation made in a function inlined into its caller: one pc, two source-level frames. */
/*
 * in_outer calls in_alloc 5 times; in_alloc is always inlined, so each
 * malloc returns into in_outer's code, inside in_alloc's inline scope.
 * 5 blocks of 500 bytes stay live to the end (2,500 bytes).
 */
#include <stdlib.h>

#include "../common/sink.h"

#define IN_BLOCKS 5
#define IN_SIZE 500

static void *kept[IN_BLOCKS];

static inline __attribute__((always_inline)) void *
in_alloc(size_t n)
{
	return malloc(opaque_size(n));	/* inlined: alloc */
}

__attribute__((noinline)) static void
in_outer(void)
{
	for (int i = 0; i < IN_BLOCKS; i++) {
		kept[i] = in_alloc(IN_SIZE);	/* inlined: call */
		sink(kept[i], IN_SIZE);
	}
}

int
main(void)
{
	in_outer();
	return 0;
}
