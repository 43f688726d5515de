/* before.c - what execer's image allocates before it execs: 4 blocks of 100 bytes kept, one of 300 freed. */
#include <stdlib.h>
#include "../common/sink.h"

static void *volatile kept[4];

__attribute__((noinline, noipa)) void
before_leak(void)
{
	for (int i = 0; i < 4; i++)
		kept[i] = malloc(opaque_size(100)); /* SITE:before_leak */
}

__attribute__((noinline, noipa)) void
before_temp(void)
{
	void *p = malloc(opaque_size(300)); /* SITE:before_temp */

	sink(p, 300);
	free(p);
}
