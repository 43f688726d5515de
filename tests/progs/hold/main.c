/*
 * main.c - hold: keeps M blocks of 32 bytes live while a test reads the tracer's memory.
 * Usage: hold M GATE. Allocates a table of M pointers and M blocks of 32 bytes from
 * hold_one (so the blocks share one stack), creates the file GATE and waits until someone
 * removes it (at most HOLD_WAIT_S seconds: then it exits 2), frees everything, writes
 * "held M" and exits 0. No stdio: only write(2) does I/O, so the only allocations are
 * the table and the blocks (M + 1 of each call).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "../common/sink.h"

#define HOLD_SIZE 32
#define HOLD_WAIT_S 600

__attribute__((noinline, noipa)) void *
hold_one(void)
{
	void *p = malloc(opaque_size(HOLD_SIZE)); /* SITE:hold_one */

	sink(p, HOLD_SIZE);
	return p;
}

/* Waits for gate to go away: 0, or -1 after HOLD_WAIT_S seconds. */
static int
hold_wait(const char *gate)
{
	struct timespec tick = { 0, 5 * 1000000L };
	long n;

	for (n = 0; n < HOLD_WAIT_S * 200L; n++) {
		if (access(gate, F_OK) != 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	return -1;
}

int
main(int argc, char **argv)
{
	unsigned long m = arg_num(argc > 1 ? argv[1] : NULL, 1000), i;
	void **v;
	int fd;

	if (argc != 3) {
		say(2, "usage: hold M GATE\n");
		return 2;
	}
	v = malloc(m * sizeof(*v));
	if (!v)
		return 1;
	for (i = 0; i < m; i++)
		v[i] = hold_one();
	fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	if (hold_wait(argv[2]) < 0)
		return 2;
	for (i = 0; i < m; i++)
		free(v[i]);
	free(v);
	say(1, "held ");
	say_num(1, m);
	say(1, "\n");
	return 0;
}
