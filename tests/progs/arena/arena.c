/* arena.c - the pool itself: a bump allocator over an mmap'd region, a header before each block. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "arena.h"

#define AR_MAGIC 0xa7e4a5u
#define AR_PAGE 4096

/* 16 bytes before every block: its size and whether it is live. */
struct ar_hdr {
	uint32_t size, magic;
	uint64_t live;
};

void
arena_init(struct arena *a, size_t size)
{
#ifdef USE_MALLOC
	a->base = NULL;
	a->size = size;
#else
	/* Guard pages on both sides: the region never merges with a neighbouring mapping. */
	char *m = mmap(NULL, size + 2 * AR_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m + AR_PAGE, size, PROT_READ | PROT_WRITE) < 0)
		abort();
	a->base = m + AR_PAGE;
	a->size = size;
#endif
	a->used = 0;
}

__attribute__((noinline, noipa)) void *
arena_alloc(struct arena *a, size_t size)
{
#ifdef USE_MALLOC
	(void)a;
	return malloc(size);
#else
	size_t need = sizeof(struct ar_hdr) + ((size + 15) & ~(size_t)15);
	struct ar_hdr *h;

	if (a->size - a->used < need)
		return NULL;
	h = (struct ar_hdr *)(a->base + a->used);
	a->used += need;
	h->size = (uint32_t)size;
	h->magic = AR_MAGIC;
	h->live = 1;
	return h + 1;
#endif
}

__attribute__((noinline, noipa)) void
arena_free(struct arena *a, void *p)
{
#ifdef USE_MALLOC
	(void)a;
	free(p);
#else
	struct ar_hdr *h = (struct ar_hdr *)p - 1;

	/* Not a block of this arena (or freed already): a pool like this one ignores it. */
	if (!p || (char *)h < a->base || (char *)p >= a->base + a->used || h->magic != AR_MAGIC || !h->live)
		return;
	h->live = 0;
#endif
}
