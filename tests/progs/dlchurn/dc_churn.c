/*
 * dc_churn.c - malloc+free pairs below a deep stack: nothing from them may be live at exit;
 * and now and then a block leaked from there, whose stacks show whether every unwind was right.
 */
#include <stdlib.h>
#include "dlchurn.h"
#include "../common/sink.h"

unsigned long dc_progress;
static __thread void *kept;	/* the blocks dc_keep leaks, chained */

__attribute__((noinline, noipa)) void
dc_keep(void)
{
	void **b = malloc(DC_KEEP_SIZE); /* SITE:dc_keep */

	*b = kept;
	kept = b;
	sink(b, DC_KEEP_SIZE);
}

__attribute__((noinline, noipa)) void
dc_churn(unsigned long k)
{
	for (unsigned long i = 0; i < k; i++) {
		void *p = malloc(DC_CHURN_SIZE); /* SITE:dc_churn */
		sink(p, DC_CHURN_SIZE);
		free(p);
		if (i % DC_KEEP_EVERY == DC_KEEP_EVERY - 1)
			dc_keep(); /* CALL:dc_keep */
		__atomic_add_fetch(&dc_progress, 1, __ATOMIC_RELAXED);
	}
}
