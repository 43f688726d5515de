/*
 * main.c - leaktls: two threads make one block each and block for good in pause(2): one keeps
 * its pointer only in a __thread variable (lt_tls.c), the other only in register r12
 * (lt_register.c, lt_park in lt.h); main keeps a third only in its own __thread variable
 * (lt_main_tls.c). Once both threads are parked main writes "leaktls: done" and returns 0:
 * the program exits while both threads are alive, so all three blocks are still reachable
 * at the exit. Last, a thread leaks a block held only on its stack and ends (lt_dead.c):
 * that one is definitely lost.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "lt.h"
#include "../common/sink.h"

static atomic_int lt_parked;

static void *
lt_tls_thread(void *arg)
{
	(void)arg;
	lt_tls();
	atomic_fetch_add(&lt_parked, 1);
	lt_park(NULL);
}

static void *
lt_dead_thread(void *arg)
{
	(void)arg;
	lt_dead();
	return NULL;
}

static void *
lt_reg_thread(void *arg)
{
	void *p = lt_register();

	(void)arg;
	atomic_fetch_add(&lt_parked, 1);
	lt_park(p);
}

int
main(void)
{
	pthread_t t1, t2, t3;

	lt_main_tls();
	if (pthread_create(&t1, NULL, lt_tls_thread, NULL) != 0 ||
	    pthread_create(&t2, NULL, lt_reg_thread, NULL) != 0)
		return 1;
	/* Spin until both have counted themselves; then give them time to reach the syscall. */
	while (atomic_load(&lt_parked) < 2)
		sched_yield();
	for (int i = 0; i < 100; i++)
		sched_yield();
	/*
	 * A thread that leaks from its stack and ends, joined: the last one made, so that its
	 * stack stays in glibc's cache as it left it, mapped but no thread's.
	 */
	if (pthread_create(&t3, NULL, lt_dead_thread, NULL) != 0 || pthread_join(t3, NULL) != 0)
		return 1;
	say(1, "leaktls: done\n");
	return 0;
}
