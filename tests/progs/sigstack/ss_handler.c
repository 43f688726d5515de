/*
 * ss_handler.c - the signal handlers: each allocates a block it keeps (24 bytes for
 * SIGUSR1, 40 for SIGUSR2, 16 for SIGALRM, up to ss_alrm_max of them). With ss_nest set,
 * the SIGUSR1 handler's malloc sends SIGUSR2 from its middle, so that handler runs inside
 * a handler's malloc inside main's malloc.
 */
#include <stdlib.h>
#include "../common/sink.h"
#include "sigstack.h"

__attribute__((noinline, noipa)) void
ss_on_usr1(int sig)
{
	void *p;

	(void)sig;
	__atomic_add_fetch(&ss_usr1, 1, __ATOMIC_RELAXED);
	if (ss_nest) {
		ss_nest = 0;
		ss_kick = SIGUSR2;
	}
	p = malloc(24); /* SITE:usr1 */
	sink(p, 1);
}

__attribute__((noinline, noipa)) void
ss_on_usr2(int sig)
{
	void *p;

	(void)sig;
	__atomic_add_fetch(&ss_usr2, 1, __ATOMIC_RELAXED);
	p = malloc(40); /* SITE:usr2 */
	sink(p, 1);
}

__attribute__((noinline, noipa)) void
ss_on_alrm(int sig)
{
	void *p;

	(void)sig;
	if (ss_alrm >= ss_alrm_max)
		return;
	ss_alrm++;
	p = malloc(16); /* SITE:alrm */
	sink(p, 1);
}
