/*
 * main.c - sigtrap: usage `sigtrap [N [GATE [block]]]` (N default 5).
 * A program that handles SIGTRAP itself and allocates in its handler: N times it raises
 * SIGTRAP and N times it executes an int3 of its own; the handler (SIGTRAP blocked while it
 * runs, the default) mallocs and frees one 24-byte block in trap_alloc() each time. With
 * GATE it first waits until that file exists (so that a tracer can attach before the traps).
 * With "block" it blocks SIGTRAP before the gate, calls trap_alloc() once after it, writes
 * "sigtrap: blocked B\n" (B is 1 while SIGTRAP is still blocked) and unblocks it.
 * Writes "sigtrap: handler COUNT\n" to stdout and exits 0.
 * `sigtrap race S`: see race.c. `sigtrap threads N`: see threads.c.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../common/sink.h"

int race_main(unsigned long s);
int threads_main(unsigned long n);
void trap_alloc(void);

static volatile sig_atomic_t n_trap;

__attribute__((noinline)) void
trap_alloc(void)
{
	void *p = malloc(opaque_size(24));	/* SITE:trap_alloc */

	sink(p, 24);
	free(p);
}

static void
on_trap(int sig)
{
	(void)sig;
	trap_alloc();
	n_trap++;
}

static void
wait_gate(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (access(path, F_OK) != 0)
		nanosleep(&ts, NULL);
}

int
main(int argc, char **argv)
{
	unsigned long n = arg_num(argc > 1 ? argv[1] : NULL, 5);
	int block = argc > 3 && strcmp(argv[3], "block") == 0;
	struct sigaction sa;
	sigset_t trap, now;

	if (argc > 2 && strcmp(argv[1], "race") == 0)
		return race_main(arg_num(argv[2], 0));
	if (argc > 2 && strcmp(argv[1], "threads") == 0)
		return threads_main(arg_num(argv[2], 0));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);
	if (block)
		sigprocmask(SIG_BLOCK, &trap, NULL);
	if (argc > 2)
		wait_gate(argv[2]);
	if (block) {
		trap_alloc();
		sigprocmask(SIG_BLOCK, NULL, &now);
		say(1, "sigtrap: blocked ");
		say_num(1, (unsigned long)sigismember(&now, SIGTRAP));
		say(1, "\n");
		sigprocmask(SIG_UNBLOCK, &trap, NULL);
	}
	for (unsigned long i = 0; i < n; i++)
		raise(SIGTRAP);
	for (unsigned long i = 0; i < n; i++)
		__asm__ volatile("int3");
	say(1, "sigtrap: handler ");
	say_num(1, (unsigned long)n_trap);
	say(1, "\n");
	return 0;
}
