/* ar_keep.c - blocks kept in a global array to the end: still reachable. */
#include "arena.h"
#include "../common/sink.h"

void *ar_kept[AR_KEEP_N];

__attribute__((noinline, noipa)) void
ar_keep(struct arena *a)
{
	for (int i = 0; i < AR_KEEP_N; i++) {
		ar_kept[i] = arena_alloc(a, opaque_size(AR_KEEP_SIZE)); /* SITE:ar_keep */
		sink(ar_kept[i], AR_KEEP_SIZE);
	}
}
