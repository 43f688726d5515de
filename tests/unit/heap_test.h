/* heap_test.h - for the unit tests of the heap: its totals and one stack's figures checked against exact ones. */
#ifndef JT_TEST_HEAP_H
#define JT_TEST_HEAP_H

#include <stdint.h>
#include <stdio.h>

#include "heap.h"
#include "tap.h"

static void
check_totals(const struct jt_heap *h, const struct jt_heap_totals *want, const char *what)
{
	struct jt_heap_totals t;
	char name[128];

	heap_totals(h, &t);
#define CHECK_FIELD(f) do { \
	snprintf(name, sizeof(name), "%s: " #f, what); \
	is_u64(t.f, want->f, name); \
} while (0)
	CHECK_FIELD(bytes_allocated);
	CHECK_FIELD(live_bytes);
	CHECK_FIELD(live_blocks);
	CHECK_FIELD(peak_live_bytes);
	CHECK_FIELD(allocs);
	CHECK_FIELD(frees);
	CHECK_FIELD(unknown_frees);
	CHECK_FIELD(invalid_frees);
	CHECK_FIELD(inside_frees);
#undef CHECK_FIELD
}

/* Checks live_bytes, live_blocks, alloc_calls, alloc_bytes of one stack. */
static void
check_stack(const struct jt_heap *h, uint32_t id, uint64_t lbytes, uint64_t lblocks,
	    uint64_t calls, uint64_t abytes, const char *what)
{
	const struct jt_stack *s = heap_stack_get(h, id);

	ok(s && s->live_bytes == lbytes && s->live_blocks == lblocks &&
	   s->alloc_calls == calls && s->alloc_bytes == abytes,
	   "%s: stack %u live %llu/%llu calls %llu bytes %llu (got %llu/%llu %llu %llu)",
	   what, id, (unsigned long long)lbytes, (unsigned long long)lblocks,
	   (unsigned long long)calls, (unsigned long long)abytes,
	   s ? (unsigned long long)s->live_bytes : 0ULL,
	   s ? (unsigned long long)s->live_blocks : 0ULL,
	   s ? (unsigned long long)s->alloc_calls : 0ULL,
	   s ? (unsigned long long)s->alloc_bytes : 0ULL);
}

#endif
