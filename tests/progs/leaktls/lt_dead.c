/*
 * lt_dead.c - a block whose only pointer is a local of a thread that has then ended (and been
 * joined): its stack may still be mapped, in glibc's cache, but a dead thread's stack is no
 * root (memcheck marks it unaddressable), so definitely lost.
 */
#include <stdlib.h>
#include "lt.h"

__attribute__((noinline, noipa)) void
lt_dead(void)
{
	char *volatile p = malloc(LT_DEAD_SIZE); /* SITE:lt_dead */

	p[0] = 1;
	/* Copies of p across the frame, so that the dead stack surely still holds it. */
	void *volatile copies[16];
	for (int i = 0; i < 16; i++)
		copies[i] = p;
	__asm__ volatile("" : : "r"(copies) : "memory");
}
