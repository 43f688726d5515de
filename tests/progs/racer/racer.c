/* racer.c - racer_churn() loops malloc+free forever; racer_leak() leaks 1 block of 77 bytes. */
#include <stdatomic.h>
#include <stdlib.h>
#include "../common/sink.h"

void *racer_block;

__attribute__((noinline, noipa)) void
racer_churn(atomic_ulong *count)
{
	for (;;) {
		void *p = malloc(40); /* SITE:racer_churn */
		sink(p, 40);
		free(p);
		atomic_fetch_add(count, 1);
	}
}

__attribute__((noinline, noipa)) void
racer_leak(void)
{
	racer_block = malloc(77); /* SITE:racer_leak */
}
