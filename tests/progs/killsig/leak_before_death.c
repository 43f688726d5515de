/* leak_before_death.c - leaks one block of 123 bytes, which must be in the last snapshot. */
#include <stdlib.h>

void *death_block;

__attribute__((noinline, noipa)) void
leak_before_death(void)
{
	death_block = malloc(123); /* SITE:leak_before_death */
}
