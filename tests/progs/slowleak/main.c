/*
 * main.c - slowleak: steady churn plus one slow leak, for age (--older-than) and growth.
 * Usage: slowleak MS. For MS milliseconds: every SL_CHURN_MS, sl_churn allocates
 * SL_CHURN_SIZE bytes and frees the block it made SL_RING calls before (so churn blocks are
 * young and their live bytes steady); every SL_LEAK_MS, sl_leak allocates SL_LEAK_SIZE bytes
 * and drops the pointer (a leak that grows at a steady rate). Then it frees the churn ring,
 * writes "leaked N" (the calls of sl_leak) and exits 0. No stdio: only write(2) does I/O.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../common/sink.h"

#define SL_CHURN_MS 2
#define SL_CHURN_SIZE 512
#define SL_RING 25
#define SL_LEAK_MS 100
#define SL_LEAK_SIZE 1000

static void *ring[SL_RING];

__attribute__((noinline, noipa)) void
sl_churn(unsigned long k)
{
	free(ring[k % SL_RING]);
	ring[k % SL_RING] = malloc(SL_CHURN_SIZE); /* SITE:sl_churn */
	memset(ring[k % SL_RING], 0x5a, SL_CHURN_SIZE);
}

__attribute__((noinline, noipa)) void
sl_leak(void)
{
	char *p = malloc(SL_LEAK_SIZE); /* SITE:sl_leak */

	memset(p, 0xab, SL_LEAK_SIZE);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static long
sl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int
main(int argc, char **argv)
{
	long ms = (long)arg_num(argc > 1 ? argv[1] : NULL, 1000), start = sl_now_ms(), next_leak = start;
	struct timespec tick = { 0, SL_CHURN_MS * 1000000L };
	unsigned long k = 0, leaked = 0;

	while (sl_now_ms() - start < ms) {
		sl_churn(k++);
		if (sl_now_ms() >= next_leak) {
			sl_leak();
			leaked++;
			next_leak += SL_LEAK_MS;
		}
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < SL_RING; i++)
		free(ring[i]);
	say(1, "leaked ");
	say_num(1, leaked);
	say(1, "\n");
	return 0;
}
