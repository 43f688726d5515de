/* th_leak.c - leaks l blocks of s bytes, chained from a per-thread list head. */
#include <stdlib.h>
#include "threads.h"

static void *heads[NTHREADS];

__attribute__((noinline, noipa)) void
th_leak(int tid, unsigned long l, size_t s)
{
	for (unsigned long i = 0; i < l; i++) {
		void **b = malloc(s); /* SITE:th_leak */
		*b = heads[tid];
		heads[tid] = b;
	}
}
