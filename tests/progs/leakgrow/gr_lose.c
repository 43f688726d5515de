/* gr_lose.c - loses one block of GR_SIZE bytes: no pointer to it is kept anywhere. */
#include <stdlib.h>
#include <string.h>
#include "gr.h"

__attribute__((noinline, noipa)) void
gr_lose(void)
{
	char *p = malloc(GR_SIZE); /* SITE:gr_lose */

	memset(p, 0xab, GR_SIZE);
	__asm__ volatile("" : : "r"(p) : "memory");
}
