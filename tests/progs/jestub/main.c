/*
 * main.c - jestub: allocates only through the je_-prefixed stand-in (js.h). Usage:
 * jestub [N] (the churn's pairs, default 100). It writes "jestub: done" with write(2)
 * (stdio would allocate with malloc) and exits 0.
 */
#include "js.h"
#include "../common/sink.h"

int
main(int argc, char **argv)
{
	js_keep();
	js_grow();
	js_lose();
	js_churn(arg_num(argc > 1 ? argv[1] : NULL, 100));
	scrub();
	say(1, "jestub: done\n");
	return 0;
}
