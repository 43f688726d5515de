/* nx_do.c - what main asks of the allocator, each in its own function and line. */
#include <stdlib.h>
#include <string.h>
#include "nested.h"
#include "../common/sink.h"

/* volatile: a store the compiler cannot drop, nor the malloc with it. */
static void *volatile nx_kept[2];

__attribute__((noinline, noipa)) void
nx_churn(void)
{
	for (int i = 0; i < NX_CHURN; i++) {
		void *p = my_malloc(opaque_size(NX_CHURN_SIZE)); /* SITE:nx_churn */

		sink(p, NX_CHURN_SIZE);
		my_free(p);
	}
	sink(NULL, 0);
}

__attribute__((noinline, noipa)) void
nx_leak(void)
{
	nx_kept[0] = my_malloc(opaque_size(NX_LEAK_SIZE)); /* SITE:nx_leak */
	sink(NULL, 0);
}

__attribute__((noinline, noipa)) void
nx_inside(void)
{
	char *p = my_malloc(opaque_size(NX_INSIDE_SIZE));

	memset(p, 0, NX_INSIDE_SIZE);
	sink(p, NX_INSIDE_SIZE);
	my_free(opaque_ptr(p + 16)); /* SITE:nx_inside */
	my_free(p);
	sink(NULL, 0);
}

__attribute__((noinline, noipa)) void
nx_raw(void)
{
	void *p = my_raw_malloc(opaque_size(NX_RAW_SIZE));

	sink(p, NX_RAW_SIZE);
	my_free(p); /* SITE:nx_raw */
	sink(NULL, 0);
}

/* Deeper than my_malloc's frame was: its slot, left by the longjmp, is overwritten by now. */
__attribute__((noinline, noipa)) static void
nx_deep(void)
{
	nx_kept[1] = malloc(opaque_size(NX_DEEP_SIZE)); /* SITE:nx_deep */
	sink(NULL, 0);
}

__attribute__((noinline, noipa)) void
nx_jump(void)
{
	jmp_buf env;

	if (setjmp(env) == 0) {
		my_oom = &env;
		sink(my_malloc(opaque_size(NX_HUGE + 1)), 0);
	}
	my_oom = NULL;
	nx_deep();
	sink(NULL, 0);
}
