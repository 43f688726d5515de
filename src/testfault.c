/* testfault.c - the tests' way to make jmptrace fault at a chosen point, for its way out (emerg.c) to be tested. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testfault.h"

static char testfault_where[32];
static long testfault_left;

void
testfault_init(void)
{
	const char *v = getenv("JMPTRACE_TEST_FAULT"), *colon;

	if (v && (colon = strchr(v, ':')) && (size_t)(colon - v) < sizeof(testfault_where)) {
		memcpy(testfault_where, v, (size_t)(colon - v));
		testfault_left = atol(colon + 1);
	}
}

void
testfault_point(const char *where)
{
	if (testfault_left <= 0 || strcmp(where, testfault_where) != 0)
		return;
	if (__atomic_sub_fetch(&testfault_left, 1, __ATOMIC_RELAXED) == 0)
		/*
		 * A real fault, at an address no process maps; not a null
		 * pointer, which UBSan's check would catch first in the
		 * sanitizer build.
		 */
		*(volatile int *)(uintptr_t)(16 + testfault_left) = 0;
}
