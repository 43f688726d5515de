/* unwind_test.h - what test_unwind_live.c and test_unwind_copy.c share: the backends, symbol addresses, signal marks (static functions: one copy per test). */
#ifndef JT_UNWIND_TEST_H
#define JT_UNWIND_TEST_H

#include <stdint.h>
#include <string.h>

#include "unwind.h"
#include "unwind_child.h"
#include "util.h"

#define BENCH_CALLS	10000

/* Every unwind check runs with each; the first is the reference for comparing them. */
static const char *const backends[] = { "libunwind", "dw" };
#define N_BACKENDS ARRAY_SIZE(backends)

static uint64_t
sym_addr(const struct target *t, const char *name)
{
	int i;

	for (i = 0; i < t->nsym; i++)
		if (strcmp(t->sym[i].name, name) == 0)
			return t->sym[i].addr;
	return 0;
}

/* The frames (below 64) whose pc carries UNWIND_PC_SIGNAL, as a bit set. */
static uint64_t
signal_marks(const uint64_t *pcs, int depth)
{
	uint64_t set = 0;
	int i;

	for (i = 0; i < depth && i < 64; i++)
		if (pcs[i] & UNWIND_PC_SIGNAL)
			set |= 1ull << i;
	return set;
}

#endif
