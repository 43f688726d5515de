/*
 * main.c - stallbeat: allocates without pause and times itself, so that a test sees any pause
 * a tracer puts it in. Usage: stallbeat SECONDS. Every round allocates a block through
 * sb_down at one of SB_DEPTHS recursion depths (so a report lists SB_DEPTHS stacks, each
 * SB_KEEP blocks live) and frees the block that slot held. Every SB_WINDOW_MS it writes
 * "W END_MS MAXGAP_US ROUNDS": the end of the window on CLOCK_MONOTONIC (as a test reads it),
 * the longest time between two rounds in it, and its rounds. After SECONDS, or at SIGINT or
 * SIGTERM, it writes "END MAXGAP_US" (the longest over the run) and exits 0. Only write(2)
 * does I/O, so that a window's line is out when it ends.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../common/sink.h"

#define SB_DEPTHS 8
#define SB_KEEP 8
#define SB_WINDOW_MS 100

static void *slots[SB_DEPTHS][SB_KEEP];
static volatile sig_atomic_t stop;

static void
on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static unsigned long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * 1000000 + (unsigned long)ts.tv_nsec / 1000;
}

/* Allocates n bytes depth calls down, so that each depth is a stack of its own. */
__attribute__((noinline, noipa)) void *
sb_down(unsigned depth, size_t n)
{
	void *p;

	if (depth)
		p = sb_down(depth - 1, n);
	else
		p = malloc(n);	/* SITE:sb_down */
	/* Keeps the call a call (no tail jump), so every depth is a frame. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void
say_line(const char *tag, unsigned long a, unsigned long b, unsigned long c, int n)
{
	char buf[128];
	int len = n == 1 ? snprintf(buf, sizeof(buf), "%s %lu\n", tag, a)
			 : snprintf(buf, sizeof(buf), "%s %lu %lu %lu\n", tag, a, b, c);

	write(1, buf, (size_t)len);
}

int
main(int argc, char **argv)
{
	unsigned long end, last, win_end, gap, win_gap = 0, max_gap = 0, rounds = 0;
	struct sigaction sa;

	if (argc < 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	last = now_us();
	end = last + arg_num(argv[1], 10) * 1000000;
	win_end = last + SB_WINDOW_MS * 1000;
	for (unsigned long r = 0; !stop; r++) {
		unsigned d = (unsigned)(r % SB_DEPTHS), k = (unsigned)(r / SB_DEPTHS % SB_KEEP);
		unsigned long t;

		free(slots[d][k]);
		slots[d][k] = sb_down(d, opaque_size(32 + r % 200));
		sink(slots[d][k], 1);
		rounds++;
		t = now_us();
		gap = t - last;
		last = t;
		if (gap > win_gap)
			win_gap = gap;
		if (gap > max_gap)
			max_gap = gap;
		if (t >= win_end) {
			say_line("W", t / 1000, win_gap, rounds, 3);
			win_gap = rounds = 0;
			win_end = t + SB_WINDOW_MS * 1000;
		}
		if (t >= end)
			break;
	}
	say_line("END", max_gap, 0, 0, 1);
	return 0;
}
