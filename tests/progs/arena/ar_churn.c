/* ar_churn.c - pairs made and freed at once. */
#include "arena.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
ar_churn(struct arena *a, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = arena_alloc(a, opaque_size(AR_CHURN_SIZE)); /* SITE:ar_churn */
		sink(p, AR_CHURN_SIZE);
		arena_free(a, p);
	}
}
