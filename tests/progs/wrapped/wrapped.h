/* wrapped.h - the wrappers of tests/progs/wrapped (wrappers.c) and the sizes main.c leaks. */
#ifndef WRAPPED_H
#define WRAPPED_H

#include <stddef.h>

/* wr_parse leaks WR_PARSE_N blocks of WR_PARSE_SIZE through xmalloc. */
#define WR_PARSE_N 10
#define WR_PARSE_SIZE 100
/* wr_cache leaks WR_CACHE_N blocks of WR_CACHE_SIZE through cw_alloc and cw_raw. */
#define WR_CACHE_N 3
#define WR_CACHE_SIZE 3000
/* wr_small leaks one block of WR_SMALL_SIZE, from malloc itself. */
#define WR_SMALL_SIZE 24
/* wr_spike allocates WR_SPIKE_SIZE and frees it at once: the peak, between two timeline samples. */
#define WR_SPIKE_SIZE (1 << 20)

void *xmalloc(size_t n);
void *cw_raw(size_t n);
void *cw_alloc(size_t n);

#endif
