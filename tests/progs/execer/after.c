/* after.c - what execer's image allocates when run as `execer leak`: 6 blocks of 40 bytes, kept to its exit. */
#include <stdlib.h>
#include "../common/sink.h"

static void *volatile kept[6];

__attribute__((noinline, noipa)) void
after_leak(void)
{
	for (int i = 0; i < 6; i++)
		kept[i] = malloc(opaque_size(40)); /* SITE:after_leak */
}
