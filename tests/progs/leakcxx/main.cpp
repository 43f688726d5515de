// main.cpp - leakcxx: one block for each of memcheck's heuristics (lx.h), each reached
// only through an interior pointer, and one exception thrown and caught. Writes
// "leakcxx: done" and returns 0.
#include "lx.h"
#include "../common/sink.h"

int
main()
{
	lx_string();
	lx_newarray();
	lx_multi();
	lx_length64();
	int caught = lx_throw();
	scrub();
	say(1, caught ? "leakcxx: done\n" : "leakcxx: no exception\n");
	return 0;
}
