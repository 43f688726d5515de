/* dc_churn.c - malloc+free pairs below a deep stack: nothing from here may be live at exit. */
#include <stdlib.h>
#include "dlchurn.h"
#include "../common/sink.h"

unsigned long dc_progress;

__attribute__((noinline, noipa)) void
dc_churn(unsigned long k)
{
	for (unsigned long i = 0; i < k; i++) {
		void *p = malloc(DC_CHURN_SIZE); /* SITE:dc_churn */
		sink(p, DC_CHURN_SIZE);
		free(p);
		__atomic_add_fetch(&dc_progress, 1, __ATOMIC_RELAXED);
	}
}

/* Recursion the compiler may not flatten: every allocation in dc_churn has depth more frames to unwind. */
__attribute__((noinline, noipa)) void
dc_deep(int depth, unsigned long k)
{
	if (depth > 0)
		dc_deep(depth - 1, k);
	else
		dc_churn(k);
	sink(opaque_ptr(NULL), 0);	/* no tail call: the frame stays */
}
