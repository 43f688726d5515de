/* sig_leak.c - leaks one block of 99 bytes after all the signals. */
#include <stdlib.h>

void *sig_block;

__attribute__((noinline, noipa)) void
sig_leak(void)
{
	sig_block = malloc(99); /* SITE:sig_leak */
}
