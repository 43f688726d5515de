/*
 * main.c - badfree: makes invalid frees to its own allocator (bf_alloc.c), which ignores
 * them: 3 double frees from bf_double_free(), 2 frees of an address inside a block from
 * bf_interior_free(), 1 free of a stack address from bf_stack_free() and 1 realloc of
 * one from bf_realloc_stack(), all from main; and correct frees: 3 + 2 + 1 from those
 * functions and 4 from bf_good(), plus one free(NULL). In all: 9 mallocs, 1 realloc,
 * 16 calls of free with a pointer (10 valid, 6 invalid) and 1 of free(NULL); nothing is
 * live at exit. Writes "badfree: 7 invalid frees ignored" with write(2) and exits 0.
 */
#include <stdlib.h>
#include "badfree.h"
#include "../common/sink.h"

int
main(void)
{
	/* Counts the compiler cannot see, so that it cannot unroll: one call site each. */
	for (unsigned long i = 0; i < opaque_size(3); i++)
		bf_double_free(); /* SITE:main_double */
	for (unsigned long i = 0; i < opaque_size(2); i++)
		bf_interior_free(); /* SITE:main_interior */
	bf_stack_free(); /* SITE:main_stack */
	bf_realloc_stack(); /* SITE:main_realloc */
	for (int i = 0; i < 4; i++)
		bf_good();
	free(opaque_ptr(NULL));
	say(1, "badfree: ");
	say_num(1, bf_ignored());
	say(1, " invalid frees ignored\n");
	return 0;
}
