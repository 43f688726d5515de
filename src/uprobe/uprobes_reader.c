/* uprobes_reader.c - the uprobe source's own threads: the reader that polls every ring and drains them, the closer of ended threads' events. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "tracer.h"
#include "up_bpf.h"
#include "up_ring.h"
#include "uprobes.h"
#include "uprobes_int.h"
#include "util.h"

/* ---- the closer ---- */

static void *
up_close_one(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/*
 * Closes fds[0..n) together: a link's close waits for the kernel's grace
 * period of its probes' removal (Linux 6.12 on: 40-80 ms here), and,
 * unlike perf events' (which the kernel serializes under its
 * event_mutex), those of links overlap: n closes take one.
 */
static void
up_close_together(const int *fds, int n)
{
	pthread_t *th = xcalloc((size_t)(n ? n : 1), sizeof(*th));
	char *started = xcalloc((size_t)(n ? n : 1), 1);
	sigset_t all, old;

	/* The signals jmptrace acts on go to its main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < n; i++)
		started[i] = pthread_create(&th[i], NULL, up_close_one, (void *)(intptr_t)fds[i]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < n; i++)
		if (i == 0 || !started[i])
			close(fds[i]);
	for (int i = 1; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(started);
	free(th);
}

/* Closes the graves of list gs (linked by next): the links of all of them together, the rest in turn. */
static void
up_graves_close(struct up_grave *gs)
{
	int *fds = NULL, n = 0;

	for (struct up_grave *g = gs; g; g = g->next)
		if (g->together) {
			fds = xrealloc(fds, (size_t)(n + g->nfds) * sizeof(*fds));
			memcpy(fds + n, g->fds, (size_t)g->nfds * sizeof(*fds));
			n += g->nfds;
		} else {
			for (int i = 0; i < g->nfds; i++)
				close(g->fds[i]);
		}
	up_close_together(fds, n);
	free(fds);
	for (struct up_grave *g = gs, *next; g; g = next) {
		next = g->next;
		free(g->fds);
		up_ring_close(g->ring);
		free(g);
	}
}

void
uprobes_grave_close(struct up_grave *g)
{
	g->next = NULL;
	up_graves_close(g);
}

/*
 * Closes what ended threads left. Closing a thread's events can take the
 * kernel 150 ms (8 threads ending together on 2 CPUs): under the tracer
 * lock that held the reader back while the other threads' rings filled.
 */
static void *
up_closer(void *arg)
{
	struct jt_uprobes *u = arg;
	struct up_grave *g;

	pthread_mutex_lock(&u->graves_lock);
	for (;;) {
		while (!u->graves && !u->closer_quit)
			pthread_cond_wait(&u->graves_cond, &u->graves_lock);
		/* All of them: the links of processes that ended together close together. */
		if (!(g = u->graves))
			break;
		u->graves = NULL;
		pthread_mutex_unlock(&u->graves_lock);
		up_graves_close(g);
		pthread_mutex_lock(&u->graves_lock);
	}
	pthread_mutex_unlock(&u->graves_lock);
	return NULL;
}

void
uprobes_bury(struct jt_uprobes *u, struct up_grave *g)
{
	if (!u->closer_running) {
		uprobes_grave_close(g);
		return;
	}
	pthread_mutex_lock(&u->graves_lock);
	g->next = u->graves;
	u->graves = g;
	pthread_cond_signal(&u->graves_cond);
	pthread_mutex_unlock(&u->graves_lock);
}

/* ---- the reader ---- */

/* A ring was added (tracer lock held): the reader polls it from now on, not after its current wait. */
void
uprobes_wake_reader(struct jt_uprobes *u)
{
	(void)!write(u->wake, &(uint64_t){ 1 }, sizeof(uint64_t));
}

/*
 * The ring descriptors of every traced thread, for poll, and their rings in
 * the same order. Returns how many (tracer lock held). A ring whose thread
 * ended is left out: its events hang up, and poll would return at once
 * until the stop that tells of the end is handled and the ring closed.
 */
static nfds_t
up_poll_set(struct jt_uprobes *u, struct pollfd **pf, struct up_ring ***rings, size_t *cap)
{
	nfds_t n = 0;

	if (!*cap) {
		*cap = 64;
		*pf = xmalloc(*cap * sizeof(**pf));
		*rings = xmalloc(*cap * sizeof(**rings));
	}
	(*rings)[n] = NULL;
	(*pf)[n++] = (struct pollfd){ .fd = u->wake, .events = POLLIN };
	if (u->bpf) {
		(*rings)[n] = NULL;
		(*pf)[n++] = (struct pollfd){ .fd = up_bpf_poll_fd(u->bpf), .events = POLLIN };
	}

	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext) {
			if (!t->uring || t->uring->hup)
				continue;
			if (n == *cap) {
				*cap = *cap ? 2 * *cap : 64;
				*pf = xrealloc(*pf, *cap * sizeof(**pf));
				*rings = xrealloc(*rings, *cap * sizeof(**rings));
			}
			(*rings)[n] = t->uring;
			(*pf)[n++] = (struct pollfd){ .fd = t->uring->fd, .events = POLLIN };
		}
	return n;
}

/* Marks the rings poll found hung up, those that are still some thread's (tracer lock held). */
static void
up_poll_hup(struct jt_uprobes *u, const struct pollfd *pf, struct up_ring **rings, nfds_t n)
{
	for (nfds_t k = 0; k < n; k++) {
		if (!rings[k] || !(pf[k].revents & (POLLHUP | POLLERR)))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
			for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext)
				if (t->uring == rings[k] && t->uring->fd == pf[k].fd)
					t->uring->hup = 1;
	}
}

/*
 * How long the reader waits for the tracer lock before it copies the BPF
 * ring's records out: a snapshot written with the lock held (its symbols,
 * its formats: 0.5 s for python3) once kept the ring from being read until
 * it overflowed (a redis soak lost 6 million events under --interval).
 * The copies are applied, first, by the next drain (up_bpf.h: the stash).
 */
#define UP_READER_STASH_MS 2

/* Takes the tracer lock; on the BPF path, reads the ring into the stash whenever it waits for it. */
static void
up_reader_lock(struct jt_uprobes *u)
{
	if (!u->bpf) {
		tthread_lock(&u->tr->tthreads);
		return;
	}
	while (tthread_lock_within(&u->tr->tthreads, UP_READER_STASH_MS) < 0)
		up_bpf_stash(u->bpf);
}

static void *
up_reader(void *arg)
{
	struct jt_uprobes *u = arg;
	struct pollfd *pf = NULL;
	struct up_ring **rings = NULL;
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec cpu;
	size_t cap = 0;
	nfds_t n;
	int r;

	/*
	 * Nothing makes the program wait for us: when its threads keep every
	 * CPU busy, a reader of ordinary priority gets a share too small to
	 * empty the rings before they fill. The lowest real-time priority runs
	 * it as soon as a ring wakes it; it sleeps in poll otherwise.
	 */
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10);
	tthread_lock(&u->tr->tthreads);
	while (!u->quit) {
		n = up_poll_set(u, &pf, &rings, &cap);
		tthread_unlock(&u->tr->tthreads);
		/*
		 * Woken by a ring an eighth full (wakeup_watermark), by a ring
		 * added (u->wake: a busy thread fills 32 MiB in less than the
		 * 20 ms a ring not yet polled would wait), or every 20 ms so
		 * that a slow trickle is seen soon. A descriptor closed
		 * meanwhile (a thread ended) only wakes us early.
		 */
		r = poll(pf, n, 20);
		if (pf[0].revents & POLLIN)
			(void)!read(u->wake, &(uint64_t){ 0 }, sizeof(uint64_t));
		up_reader_lock(u);
		if (r > 0)
			up_poll_hup(u, pf, rings, n);
		uprobes_drain(u);
		/* Asked again at every wake: a wake sent just before its wait4 began was lost. */
		for (struct jt_proc *p = u->tr->procs; p; p = p->next)
			if (p->rtld_due) {
				tthread_wake_first(&u->tr->tthreads);
				break;
			}
	}
	tthread_unlock(&u->tr->tthreads);
	free(pf);
	free(rings);
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		u->reader_cpu_ns = (uint64_t)cpu.tv_sec * 1000000000 + (uint64_t)cpu.tv_nsec;
	return NULL;
}

int
uprobes_start(struct jt_uprobes *u)
{
	sigset_t all, old;
	int r;

	if (u->reader_running)
		return 0;
	/* The signals jmptrace acts on go to its main thread, never to the reader. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&u->reader, NULL, up_reader, u);
	/* Without the closer, ended threads' events are closed at once (uprobes_thread_close). */
	if (!r && !u->closer_running)
		u->closer_running = pthread_create(&u->closer, NULL, up_closer, u) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		errno = r;
		perror_msg("--source uprobe: cannot start the reader thread");
		return -1;
	}
	u->reader_running = 1;
	/*
	 * The caller, the tracer thread, does what the kernel cannot do alone
	 * while a thread of the program waits for it, stopped: a new thread's
	 * events (milliseconds of perf_event_open, and a ring's pages to
	 * clear), a dlopen's probes, an exec. At ordinary priority among the
	 * program's busy threads it waited for a CPU 100-400 ms at a time (8
	 * threads on 2 CPUs), and so did the stopped thread. Not before: a
	 * program launched after would inherit it (the reader and the closer,
	 * made above, keep their own).
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10);
	return 0;
}

/*
 * Ends the reader and then the closer, once it has closed every grave it
 * was given; a thread that was never started is left alone.
 */
void
uprobes_stop(struct jt_uprobes *u)
{
	if (u->reader_running) {
		u->quit = 1;
		pthread_join(u->reader, NULL);
		/* What the source costs besides the kernel's work in the program's threads: make bench reads it. */
		debug_msg("uprobe source: %lu samples read; the reader's CPU %.3f s, %.3f us a sample",
			  (unsigned long)u->samples, (double)u->reader_cpu_ns / 1e9,
			  u->samples ? (double)u->reader_cpu_ns / 1e3 / (double)u->samples : 0.0);
		if (u->bpf)
			debug_msg("uprobe source: %lu of them joined calls, an entry and a return in one record; "
				  "%lu frees carried by their thread's next record",
				  (unsigned long)u->joined, (unsigned long)up_bpf_deferred(u->bpf));
		if (u->bpf && u->samples)
			debug_msg("uprobe source: %.0f bytes of stack a sample (%s)",
				  (double)u->stack_bytes / (double)u->samples,
				  u->stack_whole ? "each thread's whole stack, at most 64 KiB" : "--stack-copy");
		if (u->bpf) {
			char a[32];

			debug_msg("uprobe source: %s bytes of records kept aside while they could not be applied "
				  "(a snapshot held the tracer lock), applied after", util_num(a, up_bpf_stashed(u->bpf)));
		}
	}
	if (u->closer_running) {
		pthread_mutex_lock(&u->graves_lock);
		u->closer_quit = 1;
		pthread_cond_signal(&u->graves_cond);
		pthread_mutex_unlock(&u->graves_lock);
		pthread_join(u->closer, NULL);
		u->closer_running = 0;
	}
}
