/*
 * bf_alloc.c - the program's own allocator, which replaces glibc's malloc family: blocks
 * are carved from a static arena, each behind a header that says whether it is live, and
 * never reused. free() of anything that is not a live block (a second free, an address
 * inside a block, an address on the stack) is counted and ignored, and so is realloc's
 * (which then acts as malloc), so the program survives its own invalid frees and behaves
 * the same every time.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "badfree.h"

#define ARENA_SIZE (4u << 20)
#define MAGIC_LIVE 0x4c495645u
#define MAGIC_FREE 0x46524545u

struct hdr {
	uint32_t magic;
	uint32_t pad;
	uint64_t size;
};

static _Alignas(64) unsigned char arena[ARENA_SIZE];
static size_t used;
static unsigned long ignored;

static struct hdr *
bf_header(void *p)
{
	uintptr_t a = (uintptr_t)p;

	if (a < (uintptr_t)arena + sizeof(struct hdr) || a >= (uintptr_t)arena + used || a % 16)
		return NULL;
	return (struct hdr *)p - 1;
}

static void *
bf_carve(size_t align, size_t size)
{
	size_t start = used + sizeof(struct hdr), need;
	struct hdr *h;

	if (align < 16)
		align = 16;
	start = (start + align - 1) & ~(align - 1);
	need = start + (size ? (size + 15) & ~(size_t)15 : 16);
	if (size > ARENA_SIZE || need > ARENA_SIZE) {
		errno = ENOMEM;
		return NULL;
	}
	used = need;
	h = (struct hdr *)(arena + start) - 1;
	h->magic = MAGIC_LIVE;
	h->size = size;
	return arena + start;
}

void *
malloc(size_t size)
{
	return bf_carve(16, size);
}

void
free(void *p)
{
	struct hdr *h;

	if (!p)
		return;
	h = bf_header(p);
	if (!h || h->magic != MAGIC_LIVE) {
		ignored++;
		return;
	}
	h->magic = MAGIC_FREE;
}

void *
calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	p = malloc(total);
	if (p)
		memset(p, 0, total);
	return p;
}

void *
realloc(void *old, size_t size)
{
	struct hdr *h = old ? bf_header(old) : NULL;
	void *p;

	if (old && (!h || h->magic != MAGIC_LIVE)) {
		/* Not a block: counted, and realloc acts as malloc. */
		ignored++;
		old = NULL;
	}
	p = malloc(size);
	if (p && old) {
		memcpy(p, old, h->size < size ? h->size : size);
		free(old);
	}
	return p;
}

void *
memalign(size_t align, size_t size)
{
	return bf_carve(align, size);
}

void *
aligned_alloc(size_t align, size_t size)
{
	return bf_carve(align, size);
}

int
posix_memalign(void **out, size_t align, size_t size)
{
	void *p = bf_carve(align, size);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *
valloc(size_t size)
{
	return bf_carve(4096, size);
}

void *
pvalloc(size_t size)
{
	return bf_carve(4096, (size + 4095) & ~(size_t)4095);
}

size_t
malloc_usable_size(void *p)
{
	struct hdr *h = p ? bf_header(p) : NULL;

	return h ? h->size : 0;
}

unsigned long
bf_ignored(void)
{
	return ignored;
}
