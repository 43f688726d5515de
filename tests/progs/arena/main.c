/*
 * main.c - arena: a program's own pool (arena.h), and every kind of block a leak check tells
 * apart, made through it. Usage: arena [CHURN [wait]] (pairs made and freed at once, default
 * 1000; with wait, it first writes "ready" and reads its stdin to the end, for jmptrace -p to
 * attach). It writes "arena: done" with write(2) (stdio would allocate with malloc) and exits 0.
 */
#include <unistd.h>
#include "arena.h"
#include "../common/sink.h"

/* Says "ready" and waits for the end of stdin. */
static void
ar_wait(void)
{
	char buf[64];

	say(1, "ready\n");
	while (read(0, buf, sizeof(buf)) > 0)
		;
}

static struct arena ar;

int
main(int argc, char **argv)
{
	unsigned long churn = arg_num(argc > 1 ? argv[1] : NULL, 1000);

	if (argc > 2)
		ar_wait();
	arena_init(&ar, (churn + 64) * 64);
	ar_keep(&ar);
	ar_lose(&ar);
	ar_tree(&ar);
	ar_interior(&ar);
	ar_churn(&ar, churn);
	ar_bad(&ar);
	scrub();
	say(1, "arena: done\n");
	return 0;
}
