/* gr_keep.c - a block whose only pointer is in the holder, a block older than the attach. */
#include <stdlib.h>
#include <string.h>
#include "gr.h"

__attribute__((noinline, noipa)) void
gr_keep(void **holder)
{
	char *p = malloc(GR_KEEP_SIZE); /* SITE:gr_keep */

	memset(p, 0xcd, GR_KEEP_SIZE);
	/* Each kept block in its own slot, past the first words. */
	for (int i = 8; i < GR_HOLDER_SIZE / (int)sizeof(void *); i++)
		if (!holder[i]) {
			*(void *volatile *)&holder[i] = p;
			return;
		}
}
