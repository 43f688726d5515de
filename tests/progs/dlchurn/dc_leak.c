/* dc_leak.c - leaks one block per thread, kept from a per-thread slot. */
#include <stdlib.h>
#include "dlchurn.h"
#include "../common/sink.h"

void *dc_kept[DC_THREADS];

__attribute__((noinline, noipa)) void
dc_leak(int tid)
{
	dc_kept[tid] = malloc(DC_LEAK_SIZE); /* SITE:dc_leak */
	sink(dc_kept[tid], DC_LEAK_SIZE);
}
