/* testfault.c - the tests' way to make jmptrace fault, or dawdle, at a chosen point: for its way out (emerg.c) and its slow paths to be tested. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testfault.h"

static char testfault_where[32];
static long testfault_left;
static char testfault_slow_where[32];
static long testfault_slow_ms;

/* "WHERE:N" of environment variable name: WHERE into where, N returned (0 when unset or malformed). */
static long
testfault_read(const char *name, char *where, size_t size)
{
	const char *v = getenv(name), *colon;

	if (!v || !(colon = strchr(v, ':')) || (size_t)(colon - v) >= size)
		return 0;
	memcpy(where, v, (size_t)(colon - v));
	where[colon - v] = '\0';
	return atol(colon + 1);
}

void
testfault_init(void)
{
	testfault_left = testfault_read("JMPTRACE_TEST_FAULT", testfault_where, sizeof(testfault_where));
	testfault_slow_ms = testfault_read("JMPTRACE_TEST_SLOW", testfault_slow_where, sizeof(testfault_slow_where));
}

void
testfault_slow(const char *where)
{
	struct timespec ts;

	if (testfault_slow_ms <= 0 || strcmp(where, testfault_slow_where) != 0)
		return;
	ts.tv_sec = testfault_slow_ms / 1000;
	ts.tv_nsec = testfault_slow_ms % 1000 * 1000000;
	while (nanosleep(&ts, &ts) < 0)
		;
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
