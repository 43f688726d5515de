/* solib.c - libjtsolib.so: leaks one block of 300 bytes from the library's own code. */
#include <stdlib.h>

void *solib_block;

__attribute__((noinline, noipa)) void
solib_leak(void)
{
	solib_block = malloc(300); /* SITE:solib_leak */
}
