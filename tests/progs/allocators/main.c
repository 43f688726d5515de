/*
 * main.c - allocators: usage `allocators [ROUNDS [PEAK]]` (defaults 1 and 0).
 * Each round calls every C allocator entry a known number of times and leaves a known set of
 * blocks live (see the table in tests/integration.t). Then, when PEAK > 0, a_peak() mallocs
 * and frees PEAK bytes. Uses no stdio, so that libc allocates nothing on its own after
 * start-up.
 */
#include <stdint.h>
#include "allocators.h"
#include "../common/sink.h"

static void
round_once(void)
{
	sink(a_malloc(101), 101);
	sink(a_malloc_fail(opaque_size(SIZE_MAX / 2)), 0);
	sink(a_calloc(7, 11), 77);
	sink(a_realloc_grow(a_src(40), 4000), 4000);
	sink(a_realloc_shrink(a_src(3000), 300), 300);
	sink(a_realloc_null(opaque_ptr(NULL), 55), 55);
	sink(a_realloc_zero(a_src(66)), 0);
	sink(a_reallocarray(9, 20, 13), 260);
	sink(a_posix_memalign(64, 200), 200);
	sink(a_posix_memalign(8, 24), 24);
	sink(a_aligned_alloc(128, 256), 256);
	sink(a_memalign(32, 96), 96);
	sink(a_valloc(5000), 5000);
	sink(a_pvalloc(8192), 8192);
	a_free(a_src(77), opaque_ptr(NULL));
}

int
main(int argc, char **argv)
{
	unsigned long rounds = arg_num(argc > 1 ? argv[1] : NULL, 1);
	unsigned long peak = arg_num(argc > 2 ? argv[2] : NULL, 0);

	for (unsigned long r = 0; r < rounds; r++)
		round_once();
	if (peak > 0)
		a_peak(peak);
	say(1, "allocators: ");
	say_num(1, rounds);
	say(1, " rounds\n");
	return 0;
}
