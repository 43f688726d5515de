/* old_leak.c - blocks made before jmptrace attaches, and freed after it. */
#include <stdlib.h>
#include "attach.h"

static void *old[OLD_BLOCKS];

__attribute__((noinline, noipa)) void
old_leak(void)
{
	for (int i = 0; i < OLD_BLOCKS; i++)
		old[i] = malloc(OLD_SIZE); /* SITE:old_leak */
}

__attribute__((noinline, noipa)) void
old_free(void)
{
	for (int i = 0; i < OLD_BLOCKS; i++)
		free(old[i]); /* SITE:old_free */
}
