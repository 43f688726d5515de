/* sigpong - worker threads allocate while the main thread sends each one signals, one at a time, and checks that every one arrives. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/sink.h"

#define NTHREADS 4

static atomic_uint got[NTHREADS];
static atomic_int tids[NTHREADS];
static atomic_int stop;
static __thread int self;

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&got[self], 1);
}

/* Allocates and frees until told to stop: the signals land while it is inside malloc and free, or between. */
static void *
worker(void *arg)
{
	self = (int)(long)arg;
	atomic_store(&tids[self], (int)syscall(SYS_gettid));
	while (!atomic_load(&stop)) {
		void *p = malloc(opaque_size(24 + self));

		sink(p, 24);
		free(p);
	}
	return NULL;
}

/* Waits up to 5 s for thread i's handler to have run n times. */
static int
arrived(int i, unsigned n)
{
	for (int ms = 0; ms < 5000; ms++) {
		struct timespec ts = { 0, 1000000 };

		if (atomic_load(&got[i]) >= n)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned rounds = (unsigned)arg_num(argc > 1 ? argv[1] : NULL, 200), lost = 0, want[NTHREADS] = { 0 };
	pthread_t th[NTHREADS];
	struct sigaction sa = { 0 };

	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		while (!atomic_load(&tids[i]))
			sched_yield();
	/* One signal in flight per thread at a time: a second would merge with a pending first. */
	for (unsigned r = 1; r <= rounds; r++)
		for (int i = 0; i < NTHREADS; i++) {
			syscall(SYS_tgkill, getpid(), atomic_load(&tids[i]), SIGUSR1);
			if (!arrived(i, ++want[i])) {
				printf("sigpong: LOST a signal to thread %d in round %u\n", i, r);
				lost++;
				want[i] = atomic_load(&got[i]);
			}
		}
	atomic_store(&stop, 1);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	printf("sigpong: %u rounds, %u lost\n", rounds, lost);
	return lost != 0;
}
