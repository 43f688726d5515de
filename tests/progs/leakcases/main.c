/*
 * main.c - leakcases: the verdicts of memcheck's leak-cases test, one per function and file
 * (lc.h lists them with their sizes). main makes every block, clears what it may have left in
 * scratch registers and below the stack pointer, writes "leakcases: done" and calls exit(0)
 * from inside lc_stack(), whose local then still points at its block.
 */
#include <stdlib.h>
#include "lc.h"
#include "../common/sink.h"

static void
lc_finish(void)
{
	say(1, "leakcases: done\n");
	exit(0);
}

int
main(void)
{
	lc_global();
	lc_heap_parent();
	lc_interior();
	lc_posparent();
	lc_definite();
	lc_tree();
	lc_mmap();
	lc_zero();
	lc_pastend();
	lc_unaligned();
	lc_freed();
	scrub();
	lc_stack(lc_finish);
	return 1;
}
