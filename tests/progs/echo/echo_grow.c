/* echo_grow.c - doubles the buffer (4096 bytes at first) with realloc; exits 1 on failure. */
#include <stdlib.h>

__attribute__((noinline, noipa)) char *
echo_grow(char *buf, size_t *cap)
{
	size_t n = *cap ? *cap * 2 : 4096;
	char *p = realloc(buf, n); /* SITE:echo_grow */

	if (!p)
		exit(1);
	*cap = n;
	return p;
}
