/* leakpause.c - a heap for bench/leak_pause.sh to time --leak-check on: many small blocks, or 1 GiB to scan. */
/*
 * usage: leakpause blocks N S [early]   N blocks of S bytes (S >= 16), of every ten:
 *                                       5 in a global table (itself a malloc'd block),
 *                                       3 on a global linked list, 1 dropped (definitely
 *                                       lost), 1 in a lost chain of 10 (the head definitely
 *                                       lost, the 9 others indirectly)
 *        leakpause mib N               N reachable blocks of 1 MiB (malloc, so mmapped
 *                                       chunks) filled with bytes that are no pointer
 *        leakpause root N               an anonymous N MiB mapping of the program's own (a
 *                                       root) filled with non-pointers, plus one small
 *                                       block per MiB pointed to from it
 *
 * Protocol on stdin/stdout, so that a tracer can attach before the blocks exist (blocks
 * older than an attach are unknown to it): prints "attach PID", waits for a line on
 * stdin, allocates, prints "ready BLOCKS BYTES", then waits for end of file on stdin and
 * exits 0 keeping everything (so memcheck also sees it all at exit). With "early" the
 * N blocks are allocated before "attach" and N/100 more of the same mix after the go
 * line: the tracer knows only those, and must take the older heap as roots.
 *
 * The roots are globals on purpose: they are what the leak check has to find.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINL __attribute__((noinline, noipa))
#define MIB (1024UL * 1024)
#define CHAIN 10
/* Filler that can be no user-space address (bit 63 set), so the scan rejects it at once. */
#define NOT_A_POINTER 0xa5

struct lp_node {
	struct lp_node *next;
	uint64_t payload;
};

/* The roots: tables (the early heap's, the later one's), a list, and the program's own mapping. */
static void **lp_table, **lp_table2;
static struct lp_node *lp_list;
static unsigned char *lp_map;

static void
lp_die(const char *what)
{
	perror(what);
	exit(1);
}

static NOINL void *
lp_alloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		lp_die("malloc");
	memset(p, 0, size);
	return p;
}

/* The small-block heap, its table in *table; returns the blocks made. */
static NOINL unsigned long
lp_blocks(void ***table, unsigned long n, size_t size)
{
	struct lp_node *chain = NULL, *b;
	unsigned long i, nt = 0, nchain = 0;

	*table = lp_alloc((n / 2 + 1) * sizeof(void *));
	for (i = 0; i < n; i++) {
		b = lp_alloc(size);
		b->payload = i;		/* a small integer: no pointer */
		switch (i % 10) {
		case 0: case 1: case 2: case 3: case 4:
			(*table)[nt++] = b;
			break;
		case 5: case 6: case 7:
			b->next = lp_list;
			lp_list = b;
			break;
		case 8:
			break;		/* dropped: definitely lost */
		default:
			b->next = chain;
			chain = b;
			if (++nchain % CHAIN == 0)
				chain = NULL;	/* the head goes: it and its 9 followers are lost */
			break;
		}
	}
	return n + 1;
}

/* N reachable 1 MiB blocks of non-pointer bytes, in the table. */
static NOINL unsigned long
lp_mib(unsigned long n)
{
	unsigned long i;

	lp_table = lp_alloc(n * sizeof(void *));
	for (i = 0; i < n; i++) {
		lp_table[i] = malloc(MIB);
		if (!lp_table[i])
			lp_die("malloc");
		memset(lp_table[i], NOT_A_POINTER, MIB);
	}
	return n + 1;
}

/* An N MiB anonymous root mapping of non-pointers, with a small block's address in each MiB. */
static NOINL unsigned long
lp_root(unsigned long n)
{
	unsigned long i;
	void *b;

	lp_map = mmap(NULL, n * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (lp_map == MAP_FAILED)
		lp_die("mmap");
	memset(lp_map, NOT_A_POINTER, n * MIB);
	for (i = 0; i < n; i++) {
		b = lp_alloc(64);
		memcpy(lp_map + i * MIB + MIB / 2, &b, sizeof(b));
	}
	return n;
}

/* Overwrites the dead stack below main, where the builders may have left lost blocks' addresses. */
static NOINL void
lp_clear_stack(void)
{
	volatile unsigned char pad[256 * 1024];

	memset((unsigned char *)pad, 0, sizeof(pad));
}

/* Reads stdin until a line (want_eof 0) or end of file (1). */
static void
lp_wait(int want_eof)
{
	int c;

	while ((c = getchar()) != EOF)
		if (c == '\n' && !want_eof)
			return;
	if (!want_eof) {
		fprintf(stderr, "leakpause: end of input before the go line\n");
		exit(1);
	}
}

static unsigned long
lp_build(const char *mode, unsigned long n, size_t size)
{
	if (strcmp(mode, "blocks") == 0)
		return lp_blocks(&lp_table, n, size);
	if (strcmp(mode, "mib") == 0)
		return lp_mib(n);
	return lp_root(n);
}

int
main(int argc, char **argv)
{
	unsigned long n, nb = 0;
	size_t size = 0;
	int early;

	if (argc < 3 || (strcmp(argv[1], "blocks") && strcmp(argv[1], "mib") && strcmp(argv[1], "root")) ||
	    (strcmp(argv[1], "blocks") == 0 && (argc < 4 || atoi(argv[3]) < 16))) {
		fprintf(stderr, "usage: leakpause blocks N S [early] | mib N | root N\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	if (strcmp(argv[1], "blocks") == 0)
		size = (size_t)atoi(argv[3]);
	early = argc > 4 && strcmp(argv[4], "early") == 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (early)
		nb = lp_build(argv[1], n, size);
	printf("attach %d\n", (int)getpid());
	lp_wait(0);
	if (!early)
		nb = lp_build(argv[1], n, size);
	else
		nb += lp_blocks(&lp_table2, n / 100, size);
	lp_clear_stack();
	printf("ready %lu\n", nb);
	lp_wait(1);
	return 0;
}
