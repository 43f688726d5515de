/* tthread.c - tracer threads: starting, waking and joining them; which one the caller is. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kops.h"
#include "tthread.h"
#include "util.h"
#include "wake.h"

/*
 * Which jt_tthread the calling thread is. Thread-local by nature: it names
 * the per-thread block, it is not state of its own.
 */
static __thread struct jt_tthread *tthread_cur;

/* The signal that interrupts a tracer thread's wait4. The first real-time signal glibc leaves us. */
#define TTHREAD_WAKE_SIG (SIGRTMIN + 1)

struct jt_tthread *
tthread_self(void)
{
	return tthread_cur;
}

/*
 * Notes whether the calling thread now holds set's lock. Only the debug
 * build keeps it: tthread_locked, in its asserts, is the one reader, and a
 * user's build takes the lock at every stop.
 */
static inline void
tthread_note(struct jt_tthreads *set, int held)
{
#ifdef JT_DEBUG
	if (held)
		set->holder = pthread_self();
	__atomic_store_n(&set->held, held, __ATOMIC_RELAXED);
#else
	(void)set, (void)held;
#endif
}

void
tthread_lock(struct jt_tthreads *set)
{
	pthread_mutex_lock(&set->lock);
	tthread_note(set, 1);
}

int
tthread_lock_within(struct jt_tthreads *set, unsigned ms)
{
	struct timespec ts;

	/*
	 * pthread_mutex_timedlock's clock is CLOCK_REALTIME, the one a PI
	 * mutex's futex takes on every kernel: a step of it makes one wait
	 * shorter or longer, and the caller tries again.
	 */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	ts.tv_sec += (time_t)(ms / 1000) + ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	if (pthread_mutex_timedlock(&set->lock, &ts) != 0)
		return -1;
	tthread_note(set, 1);
	return 0;
}

void
tthread_unlock(struct jt_tthreads *set)
{
	tthread_note(set, 0);
	pthread_mutex_unlock(&set->lock);
}

int
tthread_wait(struct jt_tthreads *set, pthread_cond_t *cond, const struct timespec *ts)
{
	int r;

	tthread_note(set, 0);
	r = ts ? pthread_cond_clockwait(cond, &set->lock, UTIL_CLOCK, ts) : pthread_cond_wait(cond, &set->lock);
	tthread_note(set, 1);
	return r;
}

#ifdef JT_DEBUG
int
tthread_locked(struct jt_tthreads *set)
{
	/*
	 * Read without the lock: only a thread that holds it finds itself in
	 * holder with held set, and the holder's own writes are the ones it sees.
	 */
	return __atomic_load_n(&set->held, __ATOMIC_RELAXED) && pthread_equal(set->holder, pthread_self());
}
#endif

int
tthread_is_first(struct jt_tthreads *set)
{
	return tthread_cur == &set->t[0];
}

static void
tthread_on_wake(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	wake_note(uc);
}

void
tthread_init(struct jt_tthreads *set, struct jt_tracer *tr, int prio_inherit)
{
	struct jt_tthread *tt = &set->t[0];
	pthread_mutexattr_t ma;
	struct sigaction sa;

	memset(tt, 0, sizeof(*tt));
	tt->tr = tr;
	tt->ktid = (pid_t)syscall(SYS_gettid);
	cpu_init(&tt->cpu);
	set->n = 1;
	tthread_cur = tt;
	/*
	 * Held for a couple of microseconds per stop: a waiter that spins a
	 * little gets it sooner than one that sleeps in futex and is woken.
	 * The uprobe source's reader runs at real-time priority and takes it
	 * to apply what the rings hold: a holder of ordinary priority that the
	 * program's busy threads keep off the CPU would hold the reader back
	 * until the rings overflow (8 busy threads on 2 CPUs: waits of 600 ms),
	 * so there the holder inherits the reader's priority while it waits.
	 */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	if (prio_inherit)
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&set->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&set->cond, NULL);
	pthread_cond_init(&set->unwound, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tthread_on_wake;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the point is to make wait4 return EINTR (wake.h: or not start). */
	sigaction(TTHREAD_WAKE_SIG, &sa, NULL);
}

struct tthread_boot {
	struct jt_tthreads *set;
	struct jt_tthread *tt;
	void *(*loop)(void *);
};

static void *
tthread_main(void *arg)
{
	struct tthread_boot boot = *(struct tthread_boot *)arg;
	sigset_t wake;

	free(arg);
	tthread_cur = boot.tt;
	/* tthread_wake reads it under the lock. */
	tthread_lock(boot.set);
	boot.tt->ktid = (pid_t)syscall(SYS_gettid);
	tthread_unlock(boot.set);
	/* Only the wake signal reaches this tracer thread; SIGINT and the tick belong to the main one. */
	sigemptyset(&wake);
	sigaddset(&wake, TTHREAD_WAKE_SIG);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	return boot.loop(boot.tt);
}

int
tthread_start(struct jt_tthreads *set, int n, void *(*loop)(void *))
{
	sigset_t mine, old;

	if (n > JT_MAX_TTHREADS)
		n = JT_MAX_TTHREADS;
	/*
	 * The other tracer threads inherit this mask: the signals the main
	 * thread acts on (selfsig.h: every one sent to end, stop or ask
	 * jmptrace for something) stay blocked in them, so that the main
	 * thread's wait4 is the one they interrupt. Not the faults, which
	 * the CPU raises in the thread that faulted (blocked, they would kill
	 * jmptrace at once), nor emerg.c's signal. SIGCHLD must not be blocked anywhere: an ignored
	 * signal is dropped when sent, but a blocked one is queued, and every
	 * stop of every tracee sends one; the main thread would then dequeue
	 * and discard it after each of its system calls.
	 */
	util_sigset_async(&mine);
	sigdelset(&mine, SIGCHLD);
	sigdelset(&mine, SIGRTMIN + 2);	/* emerg.c's */
	pthread_sigmask(SIG_BLOCK, &mine, &old);
	for (int i = 1; i < n; i++) {
		struct jt_tthread *tt = &set->t[i];
		struct tthread_boot *boot = xcalloc(1, sizeof(*boot));

		memset(tt, 0, sizeof(*tt));
		tt->tr = set->t[0].tr;
		tt->index = i;
		cpu_init(&tt->cpu);
		boot->set = set;
		boot->tt = tt;
		boot->loop = loop;
		if (pthread_create(&tt->thread, NULL, tthread_main, boot) != 0) {
			free(boot);
			break;
		}
		tt->running = 1;
		set->n = i + 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return set->n;
}

/* Interrupts tt's wait4 (TTHREAD_WAKE_SIG has a handler and no SA_RESTART). */
static void
tthread_signal(const struct jt_tthread *tt)
{
	syscall(SYS_tgkill, getpid(), tt->ktid, TTHREAD_WAKE_SIG);
}

void
tthread_wake(struct jt_tthread *tt)
{
	if (tt->index > 0 && tt->running && tt->ktid > 0)
		tthread_signal(tt);
}

void
tthread_wake_first(struct jt_tthreads *set)
{
	struct jt_tthread *tt = &set->t[0];

	if (tt->ktid > 0 && tt->ktid != (pid_t)syscall(SYS_gettid))
		tthread_signal(tt);
}

void
tthread_wake_all(struct jt_tthreads *set)
{
	for (int i = 1; i < set->n; i++)
		tthread_wake(&set->t[i]);
	pthread_cond_broadcast(&set->cond);
}

void
tthread_join_all(struct jt_tthreads *set)
{
	DEBUG_ASSERT(tthread_locked(set));
	for (int i = 1; i < set->n; i++) {
		struct jt_tthread *tt = &set->t[i];

		if (!tt->running)
			continue;
		/* Called with set->lock held; the tracer thread needs it to see quit. */
		tthread_wake_all(set);
		tthread_unlock(set);
		pthread_join(tt->thread, NULL);
		tthread_lock(set);
		tt->running = 0;
		if (tt->has_alarm)
			timer_delete(tt->alarm);
		tt->has_alarm = 0;
	}
	set->n = 1;
}

int
tthread_alarm(struct jt_tthread *tt, unsigned ms)
{
	struct itimerspec its = { .it_value = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 } };

	if (!tt->has_alarm) {
		struct sigevent sev;

		if (!ms)
			return 0;
		memset(&sev, 0, sizeof(sev));
		/* To this thread alone: a process-wide timer's signal could go to any thread. */
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = TTHREAD_WAKE_SIG;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &sev, &tt->alarm) < 0)
			return -1;
		tt->has_alarm = 1;
	}
	return timer_settime(tt->alarm, 0, &its, NULL);
}

int
tthread_seize(struct jt_tthread *tt, pid_t tid, long options, unsigned ms)
{
	int woken, err;
	long r;

	/* A wake noted before must not end the seize at once; it is noted again after. */
	woken = wake_arm();
	tthread_alarm(tt, ms);
	r = kops->ptrace_unless_woken(PTRACE_SEIZE, tid, NULL, (void *)options);
	err = errno;
	tthread_alarm(tt, 0);
	if (woken)
		wake_note(NULL);
	errno = err;
	return r < 0 ? -1 : 0;
}

struct jt_tthread *
tthread_least_loaded(struct jt_tthreads *set)
{
	struct jt_tthread *best = &set->t[0];

	for (int i = 1; i < set->n; i++)
		if (set->t[i].running && set->t[i].nactive < best->nactive)
			best = &set->t[i];
	return best;
}


void
tthread_keep_waited(struct jt_tthread *tt, pid_t tid, int status)
{
	if (tt->nwaited == tt->waited_cap) {
		tt->waited_cap = tt->waited_cap ? 2 * tt->waited_cap : 16;
		tt->waited = xrealloc(tt->waited, tt->waited_cap * sizeof(*tt->waited));
	}
	tt->waited[tt->nwaited].tid = tid;
	tt->waited[tt->nwaited].status = status;
	tt->nwaited++;
}

int
tthread_take_waited(struct jt_tthread *tt, size_t i, struct jt_waited *w)
{
	if (i >= tt->nwaited)
		return -1;
	*w = tt->waited[i];
	memmove(&tt->waited[i], &tt->waited[i + 1], (tt->nwaited - i - 1) * sizeof(*tt->waited));
	tt->nwaited--;
	return 0;
}

int
tthread_take_waited_of(struct jt_tthread *tt, pid_t tid, int *status)
{
	struct jt_waited w;

	for (size_t i = 0; tt && i < tt->nwaited; i++)
		if (tt->waited[i].tid == tid && tthread_take_waited(tt, i, &w) == 0) {
			*status = w.status;
			return 0;
		}
	return -1;
}

void
tthread_clear_waited(struct jt_tthread *tt)
{
	free(tt->waited);
	tt->waited = NULL;
	tt->nwaited = tt->waited_cap = 0;
}
