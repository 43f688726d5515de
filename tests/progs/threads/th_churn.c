/* th_churn.c - k malloc+free pairs: nothing from here may be live at exit. */
#include <stdlib.h>
#include "threads.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
th_churn(unsigned long k)
{
	for (unsigned long i = 0; i < k; i++) {
		void *p = malloc(CHURN_SIZE); /* SITE:th_churn */
		sink(p, CHURN_SIZE);
		free(p);
	}
}
