/* je.c - the stand-in allocator: a bump allocator over one mmap'd region, a header before each block. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "js.h"

#define JS_REGION (64u << 20)

static char *js_base;
static size_t js_used;

/* 16 bytes before every block: its size. */
struct js_hdr {
	uint64_t size, live;
};

static void *
js_carve(size_t size)
{
	size_t need = sizeof(struct js_hdr) + ((size + 15) & ~(size_t)15);
	struct js_hdr *h;

	if (!js_base) {
		js_base = mmap(NULL, JS_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		if (js_base == MAP_FAILED)
			abort();
	}
	if (JS_REGION - js_used < need)
		return NULL;
	h = (struct js_hdr *)(js_base + js_used);
	js_used += need;
	h->size = size;
	h->live = 1;
	return h + 1;
}

static void
js_release(void *p)
{
	if (p)
		((struct js_hdr *)p - 1)->live = 0;
}

/* noipa everywhere: identical bodies must stay separate functions (no identical code folding). */
__attribute__((noipa)) void *
je_malloc(size_t size)
{
	return js_carve(size);
}

__attribute__((noipa)) void *
je_calloc(size_t n, size_t size)
{
	return js_carve(n * size);	/* the region is fresh from mmap: zeroed */
}

__attribute__((noipa)) void *
je_realloc(void *p, size_t size)
{
	void *q = js_carve(size);
	size_t old = p ? ((struct js_hdr *)p - 1)->size : 0;

	if (q && p)
		memcpy(q, p, old < size ? old : size);
	if (q)
		js_release(p);
	return q;
}

__attribute__((noipa)) void
je_free(void *p)
{
	js_release(p);
}

__attribute__((noipa)) void *
je_mallocx(size_t size, int flags)
{
	(void)flags;
	return js_carve(size);
}

__attribute__((noipa)) void
je_sdallocx(void *p, size_t size, int flags)
{
	(void)size;
	(void)flags;
	js_release(p);
}

__attribute__((noipa)) void
je_dallocx(void *p, int flags)
{
	(void)flags;
	js_release(p);
}
