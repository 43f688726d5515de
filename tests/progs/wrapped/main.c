/*
 * main.c - wrapped: leaks through allocator wrappers, for the rows of --html, which name the
 * code that called a wrapper rather than the wrapper. wr_parse leaks through xmalloc (a
 * wrapper jmptrace knows), wr_cache through cw_alloc and cw_raw (named by --alloc-fn), and
 * wr_small from malloc itself: three loss records of different sizes, none the smallest
 * first. wr_spike first makes a short peak of a mebibyte, freed at once, which no timeline
 * sample sees. Then "wrapped: done" through stdio (whose buffer is the C library's, a
 * runtime block) and exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include "wrapped.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) static void
wr_spike(void)
{
	char *p = malloc(opaque_size(WR_SPIKE_SIZE)); /* SITE:wr_spike */

	sink(p, WR_SPIKE_SIZE);
	free(p);
}

__attribute__((noinline, noipa)) static void
wr_parse(void)
{
	for (int i = 0; i < WR_PARSE_N; i++)
		sink(xmalloc(opaque_size(WR_PARSE_SIZE)), WR_PARSE_SIZE); /* SITE:wr_parse */
}

__attribute__((noinline, noipa)) static void
wr_cache(void)
{
	for (int i = 0; i < WR_CACHE_N; i++)
		sink(cw_alloc(opaque_size(WR_CACHE_SIZE)), WR_CACHE_SIZE); /* SITE:wr_cache */
}

__attribute__((noinline, noipa)) static void
wr_small(void)
{
	sink(malloc(opaque_size(WR_SMALL_SIZE)), WR_SMALL_SIZE); /* SITE:wr_small */
}

int
main(void)
{
	wr_spike();
	wr_parse();
	wr_cache();
	wr_small();
	/* No copy of a leaked pointer may stay for the leak check to find. */
	sink(NULL, 0);
	scrub();
	printf("wrapped: done\n");
	return 0;
}
