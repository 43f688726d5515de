/* my_alloc.c - the allocator over malloc: an 8-byte header holding a mark and the size. */
#include <stdint.h>
#include <stdlib.h>
#include "nested.h"
#include "../common/sink.h"

#define MY_MARK 0x6d796d61u

struct my_hdr {
	uint32_t mark;
	uint32_t size;
};

jmp_buf *my_oom;
static void *my_spare;		/* the allocator's own block: made once, never freed */
static unsigned long refused;

__attribute__((noinline, noipa)) void *
my_raw_malloc(size_t n)
{
	struct my_hdr *h = malloc(n + sizeof(*h)); /* SITE:my_raw_malloc */

	if (!h)
		return NULL;
	h->mark = MY_MARK;
	h->size = (uint32_t)n;
	return h + 1;
}

__attribute__((noinline, noipa)) void *
my_malloc(size_t n)
{
	if (n > NX_HUGE && my_oom)
		longjmp(*my_oom, 1);
	if (!my_spare) {
		my_spare = malloc(opaque_size(100));
		sink(my_spare, 100);
	}
	return my_raw_malloc(n);
}

__attribute__((noinline, noipa)) void
my_free(void *p)
{
	struct my_hdr *h = (struct my_hdr *)p - 1;

	if (!p)
		return;
	/* A pointer inside a block has no header in front of it: refused, so glibc does not abort. */
	if (h->mark != MY_MARK) {
		__atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
		return;
	}
	h->mark = 0;
	free(h);
}

unsigned long
my_refused(void)
{
	return refused;
}
