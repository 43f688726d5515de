/* bf_bad.c - the invalid frees, each from its own function and line, and one correct pair. */
#include <stdlib.h>
#include "badfree.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
bf_double_free(void)
{
	void *p = malloc(24);
	void *again = opaque_ptr(p);	/* the compiler cannot tell it is p */

	sink(p, 24);
	free(p);
	free(again); /* SITE:bf_double_free */
	sink(NULL, 0);	/* no tail call: this function stays on the free's stack */
}

__attribute__((noinline, noipa)) void
bf_interior_free(void)
{
	char *p = malloc(64);

	sink(p, 64);
	free(opaque_ptr(p + 16)); /* SITE:bf_interior_free */
	free(p);
	sink(NULL, 0);
}

__attribute__((noinline, noipa)) void
bf_stack_free(void)
{
	char local[32];

	sink(local, sizeof(local));
	free(opaque_ptr(local)); /* SITE:bf_stack_free */
	sink(NULL, 0);
}

__attribute__((noinline, noipa)) void
bf_realloc_stack(void)
{
	char local[32];
	void *p;

	sink(local, sizeof(local));
	p = realloc(opaque_ptr(local), 40); /* SITE:bf_realloc_stack */
	sink(p, 40);
	free(p);
}

__attribute__((noinline, noipa)) void
bf_good(void)
{
	void *p = malloc(100);

	sink(p, 100);
	free(p);
}
