/* profile.c - a program whose every figure is known, for the analyses and the file formats. */
/*
 * Phases, each in a function of its own (noinline, so every stack names it):
 *   big_phase:    256 blocks of 4096 bytes (1 MiB) held for 300 ms, then freed: the peak
 *   small_phase:  10 blocks of 1000 bytes, kept to the end: the only live stack at exit
 *   temp_loop:    100 times malloc(64) then free at once: 100 temporary allocations
 *   hist_sizes:   one block each of 1, 8, 16, 17, 100, 1024, 1025 and 65536 bytes, all
 *                 freed in the order they were made (none temporary): histogram buckets
 *                 1, 8, 16, 32, 128, 1024, 2048, 65536, one each
 * With an argument, it prints its pid and waits that many seconds first (for -p).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../common/sink.h"

#define BIG_BLOCKS	256
#define BIG_SIZE	4096
#define SMALL_BLOCKS	10
#define SMALL_SIZE	1000
#define TEMP_LOOPS	100
#define TEMP_SIZE	64

static void *big[BIG_BLOCKS];
static void *small[SMALL_BLOCKS];

__attribute__((noinline)) static void
big_phase(void)
{
	for (int i = 0; i < BIG_BLOCKS; i++)
		big[i] = malloc(BIG_SIZE);	/* profile: big */
	sink(big[BIG_BLOCKS - 1], BIG_SIZE);
	usleep(300 * 1000);
	for (int i = 0; i < BIG_BLOCKS; i++)
		free(big[i]);
}

__attribute__((noinline)) static void
small_phase(void)
{
	for (int i = 0; i < SMALL_BLOCKS; i++)
		small[i] = malloc(SMALL_SIZE);	/* profile: small */
	sink(small[0], SMALL_SIZE);
}

__attribute__((noinline)) static void
temp_loop(void)
{
	for (int i = 0; i < TEMP_LOOPS; i++) {
		void *p = malloc(TEMP_SIZE);	/* profile: temp */
		sink(p, TEMP_SIZE);
		free(p);
	}
}

__attribute__((noinline)) static void
hist_sizes(void)
{
	static const size_t sizes[] = { 1, 8, 16, 17, 100, 1024, 1025, 65536 };
	void *p[sizeof(sizes) / sizeof(sizes[0])];
	size_t i, n = sizeof(sizes) / sizeof(sizes[0]);

	for (i = 0; i < n; i++)
		p[i] = malloc(sizes[i]);	/* profile: hist */
	for (i = 0; i < n; i++) {
		sink(p[i], 1);
		free(p[i]);
	}
}

int
main(int argc, char **argv)
{
	if (argc > 1) {
		printf("%d\n", (int)getpid());
		fflush(stdout);
		sleep((unsigned)atoi(argv[1]));
	}
	big_phase();
	small_phase();
	temp_loop();
	hist_sizes();
	return 0;
}
