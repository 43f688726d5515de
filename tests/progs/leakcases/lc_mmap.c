/*
 * lc_mmap.c - a block whose only pointer is in an anonymous mapping the program made itself
 * (and whose address it then forgets): such mappings are roots, so still reachable.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include "lc.h"

__attribute__((noinline, noipa)) void
lc_mmap(void)
{
	void **page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (page == MAP_FAILED)
		abort();
	p = malloc(LC_MMAP_SIZE); /* SITE:lc_mmap */
	((volatile char *)p)[0] = 1;
	((void *volatile *)page)[100] = p;
}
