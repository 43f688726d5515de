/*
 * ctor.c - a constructor that leaks before main and registers an atexit handler that leaks
 * after main: the tracer must be tracing before constructors run and until the very end.
 */
#include <stdlib.h>
#include "leak.h"

void *ctor_block, *atexit_block;

__attribute__((noinline, noipa)) static void
leak_at_exit(void)
{
	atexit_block = malloc(ATEXIT_SIZE); /* ATEXIT-SITE */
}

__attribute__((constructor, noinline, noipa)) static void
leak_in_ctor(void)
{
	ctor_block = malloc(CTOR_SIZE); /* CTOR-SITE */
	atexit(leak_at_exit);
}
