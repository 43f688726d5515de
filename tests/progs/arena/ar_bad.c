/* ar_bad.c - an arena_free of an address inside a kept block: an invalid free. */
#include "arena.h"

__attribute__((noinline, noipa)) void
ar_bad(struct arena *a)
{
#ifndef USE_MALLOC
	arena_free(a, (char *)ar_kept[0] + 16); /* SITE:ar_bad */
	__asm__ volatile("" : : : "memory");	/* no tail call: this frame stays on the stack */
#else
	(void)a;
#endif
}
