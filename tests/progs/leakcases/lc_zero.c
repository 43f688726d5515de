/* lc_zero.c - malloc(0), its start pointer in a global: still reachable (a block of 0 bytes). */
#include <stdlib.h>
#include "lc.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
lc_zero(void)
{
	lc_zero_ptr = malloc(opaque_size(LC_ZERO_SIZE)); /* SITE:lc_zero */
}
