/* churn.c - mallocs and frees n blocks: nothing from here may be live at exit. */
#include <stdlib.h>
#include "leak.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
churn(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(CHURN_SIZE); /* CHURN-SITE */
		sink(p, CHURN_SIZE);
		free(p);
	}
}
