/* new_leak.c - each thread leaks NEW_BLOCKS blocks after jmptrace has attached. */
#include <stdlib.h>
#include "attach.h"

static void *volatile slot;

__attribute__((noinline, noipa)) void
new_leak(void)
{
	for (int i = 0; i < NEW_BLOCKS; i++) {
		void **b = malloc(NEW_SIZE); /* SITE:new_leak */
		*b = slot;
		slot = b;
	}
}
