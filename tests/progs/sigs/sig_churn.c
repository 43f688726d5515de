/* sig_churn.c - malloc, raise(SIGUSR1) while the block is live, free. */
#include <signal.h>
#include <stdlib.h>
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
sig_churn(unsigned long i)
{
	void *p = malloc(32 + i % 8); /* SITE:sig_churn */

	sink(p, 1);
	raise(SIGUSR1);
	free(p);
}
