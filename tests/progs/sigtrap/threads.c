/*
 * threads.c - sigtrap threads N: 4 threads each raise SIGTRAP N times and execute N int3
 * instructions of their own; the handler (SIGTRAP blocked while it runs) mallocs and frees
 * one 24-byte block in trap_alloc() each time, so the threads are often in their handlers
 * at once. Writes "sigtrap: threads handler COUNT\n" to stdout; exits 0.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include "../common/sink.h"

#define THREADS 4

void trap_alloc(void);

static volatile int n_handled;

static void
on_trap(int sig)
{
	(void)sig;
	trap_alloc();
	__atomic_add_fetch(&n_handled, 1, __ATOMIC_RELAXED);
}

static void *
threads_loop(void *arg)
{
	unsigned long n = *(unsigned long *)arg;

	for (unsigned long i = 0; i < n; i++) {
		raise(SIGTRAP);
		__asm__ volatile("int3");
	}
	return NULL;
}

int
threads_main(unsigned long n)
{
	struct sigaction sa;
	pthread_t th[THREADS];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, threads_loop, &n);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	say(1, "sigtrap: threads handler ");
	say_num(1, (unsigned long)n_handled);
	say(1, "\n");
	return 0;
}
