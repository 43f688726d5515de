/*
 * lt_main_tls.c - a block whose only pointer is a __thread variable of the main thread. Its
 * static TLS is not on a thread stack: ld.so's early allocator maps it in a dynamic program,
 * and a static one puts it at the start of the brk heap, outside any block malloc returned.
 */
#include <stdlib.h>
#include "lt.h"

static __thread void *volatile lt_main_slot;

__attribute__((noinline, noipa)) void
lt_main_tls(void)
{
	char *p = malloc(LT_MAIN_TLS_SIZE); /* SITE:lt_main_tls */
	((volatile char *)p)[0] = 1;
	lt_main_slot = p;
}
