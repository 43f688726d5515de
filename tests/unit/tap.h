/* tap.h - a minimal TAP producer for the unit tests (run by prove --exec ''). */
#ifndef JT_TAP_H
#define JT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

static void __attribute__((format(printf, 2, 3)))
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define is_u64(got, want, name) do { \
	unsigned long long g_ = (got), w_ = (want); \
	ok(g_ == w_, "%s (got %llu, want %llu)", name, g_, w_); \
} while (0)

/* Prints the plan; returns the process exit status. */
static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
