/* ar_lose.c - blocks whose pointers are dropped at once: definitely lost. */
#include "arena.h"

__attribute__((noinline, noipa)) void
ar_lose(struct arena *a)
{
	for (int i = 0; i < AR_LOSE_N; i++) {
		char *p = arena_alloc(a, AR_LOSE_SIZE); /* SITE:ar_lose */
		((volatile char *)p)[0] = 1;
	}
}
