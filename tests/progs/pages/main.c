/* pages - maps pages outside malloc (--pages): 10 anonymous regions of 1 MiB from two functions, unmaps 4 and half of a fifth, splits one, mremaps one, grows brk. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../common/sink.h"

#define MIB (1024 * 1024)

static void *
map_one(void)
{
	void *p = mmap(NULL, opaque_size(MIB), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	return p;
}

/* Six regions: their mmap calls are inlined into map_a's loop, one line. */
__attribute__((noinline)) static void
map_a(void **v)
{
	for (int i = 0; i < 6; i++)
		v[i] = map_one(); /* PAGES_MAP_A */
}

__attribute__((noinline)) static void
map_b(void **v)
{
	for (int i = 0; i < 4; i++)
		v[i] = map_one(); /* PAGES_MAP_B */
}

__attribute__((noinline)) static void
grow_brk(void)
{
	if (sbrk(opaque_size(65536)) == (void *)-1) /* PAGES_SBRK */
		abort();
}

int
main(void)
{
	void *a[6], *b[4], *shared, *fixed;
	char *p;

	map_a(a);
	map_b(b);
	/* Not counted as pages: malloc's own mmap of a large block, and a shared mapping. */
	sink(malloc(opaque_size(4 * MIB)), 1); /* PAGES_MALLOC */
	shared = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sink(shared, 1);
	/* Four whole regions go: a[0], a[1], b[0], b[1]. */
	munmap(a[0], MIB);
	munmap(a[1], MIB);
	munmap(b[0], MIB);
	munmap(b[1], MIB);
	/* Half of a fifth: a[2] keeps its first 512 KiB. */
	munmap((char *)a[2] + MIB / 2, MIB / 2);
	/* The middle 256 KiB of a[5]: two regions of 384 KiB are left. */
	munmap((char *)a[5] + 384 * 1024, 256 * 1024);
	/* a[3] grows to 3 MiB, wherever the kernel puts it: still one region of map_a's. */
	p = mremap(a[3], MIB, 3 * MIB, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		abort();
	sink(p, 3 * MIB);
	/* A file-less MAP_FIXED shared mapping over the last 64 KiB of b[3] takes them out. */
	fixed = mmap((char *)b[3] + MIB - 65536, 65536, PROT_READ, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (fixed == MAP_FAILED)
		abort();
	grow_brk();
	say(1, "pages: done\n");
	return 0;
}
