/* grow.c - heartbeat: the one allocation that stays, in a file of its own. */
#include <stdlib.h>
#include "heartbeat.h"

__attribute__((noinline, noipa)) void *
hb_keep(void)
{
	void *p = malloc(KEEP_SIZE);	/* SITE:hb_keep */

	/* Keeps the call a call (no tail jump), so hb_keep is frame 0 of the stack. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
