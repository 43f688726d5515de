/*
 * wrappers.c - wrapped's allocator wrappers, each in this file of its own and never inlined,
 * so that they stand in every stack between the allocator and the code that wanted the
 * memory: xmalloc (a name jmptrace knows), and cw_alloc over cw_raw (names it learns from
 * --alloc-fn 'cw_*').
 */
#include <stdlib.h>
#include <unistd.h>
#include "wrapped.h"

__attribute__((noinline, noipa)) void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		_exit(3);
	return p;
}

__attribute__((noinline, noipa)) void *
cw_raw(size_t n)
{
	void *p = malloc(n);

	/* Not a tail call: cw_raw stays in the stack, a second wrapper under cw_alloc. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline, noipa)) void *
cw_alloc(size_t n)
{
	void *p = cw_raw(n);

	if (!p)
		_exit(3);
	return p;
}
