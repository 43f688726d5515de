/* leaks.c - parent_leak() leaks one block of 111 bytes, child_leak() ten of 222 bytes. */
#include <stdlib.h>

static void *volatile slot;

__attribute__((noinline, noipa)) void
parent_leak(void)
{
	slot = malloc(111); /* SITE:parent_leak */
}

__attribute__((noinline, noipa)) void
child_leak(void)
{
	for (int i = 0; i < 10; i++) {
		void **b = malloc(222); /* SITE:child_leak */
		*b = slot;
		slot = b;
	}
}
