/*
 * lc_stack.c - a block whose only pointer is a local of this function, which is still running
 * when the program exits (then() calls exit): still reachable, from the stack.
 */
#include <stdlib.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_stack(void (*then)(void))
{
	char *volatile p = malloc(LC_STACK_SIZE); /* SITE:lc_stack */

	p[0] = 1;
	then();
	/* Never reached (then exits); keeps p's slot live and the call not a tail call. */
	free(p);
}
