/* a_peak.c - mallocs and frees one large block: only the peak of the live heap sees it. */
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
a_peak(size_t n)
{
	void *p = malloc(n); /* SITE:a_peak */
	sink(p, n);
	free(p);
}
