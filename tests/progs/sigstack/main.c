/*
 * main.c - sigstack: usage `sigstack [threads] [N]` (default 10), or `sigstack timer [N]`.
 * A signal handler allocates while the thread is inside the program's own (async-signal-
 * safe) malloc, calloc and realloc: N rounds of one call of each, every one of which sends
 * itself SIGUSR1 from its middle, and of a malloc whose SIGUSR1 handler's malloc sends
 * SIGUSR2, whose handler allocates too. The handlers keep their blocks: 4N of 24 bytes,
 * N of 40. Writes "sigstack: usr1 4N usr2 N" and exits 0.
 * With "threads": 4 threads make the N rounds at once, each signalling itself: 16N and 4N.
 * With "timer": allocates and frees in a loop under a 1 kHz SIGALRM until the handler
 * has kept N blocks of 16 bytes (default 300); the signal lands anywhere, inside the
 * allocators or not. Writes "sigstack: alrm N" and exits 0.
 */
#include <pthread.h>
#include <string.h>
#include <sys/time.h>
#include "../common/sink.h"
#include "sigstack.h"

#define SS_THREADS 4

__thread volatile sig_atomic_t ss_kick, ss_nest;
volatile sig_atomic_t ss_alrm, ss_alrm_max;
unsigned long ss_usr1, ss_usr2;

static void *
ss_thread(void *arg)
{
	ss_rounds((unsigned long)arg); /* CALL:thread */
	return NULL;
}

static int
ss_threads(unsigned long n)
{
	pthread_t th[SS_THREADS];
	int i;

	for (i = 0; i < SS_THREADS; i++)
		if (pthread_create(&th[i], NULL, ss_thread, (void *)n) != 0)
			return 1;
	for (i = 0; i < SS_THREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int
ss_timer(unsigned long n)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };

	ss_alrm_max = (sig_atomic_t)n;
	setitimer(ITIMER_REAL, &it, NULL);
	while (ss_alrm < ss_alrm_max)
		ss_churn(); /* CALL:churn */
	setitimer(ITIMER_REAL, &off, NULL);
	say(1, "sigstack: alrm ");
	say_num(1, (unsigned long)ss_alrm);
	say(1, "\n");
	return 0;
}

static void
ss_handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

int
main(int argc, char **argv)
{
	int timer = argc > 1 && strcmp(argv[1], "timer") == 0;
	int threads = argc > 1 && strcmp(argv[1], "threads") == 0;
	unsigned long n = arg_num(argc > 1 + timer + threads ? argv[1 + timer + threads] : NULL, timer ? 300 : 10);

	ss_handle(SIGUSR1, ss_on_usr1);
	ss_handle(SIGUSR2, ss_on_usr2);
	ss_handle(SIGALRM, ss_on_alrm);
	if (timer)
		return ss_timer(n);
	if (threads) {
		if (ss_threads(n) != 0)
			return 1;
	} else {
		ss_rounds(n); /* CALL:rounds */
	}
	say(1, "sigstack: usr1 ");
	say_num(1, ss_usr1);
	say(1, " usr2 ");
	say_num(1, ss_usr2);
	say(1, "\n");
	return 0;
}
