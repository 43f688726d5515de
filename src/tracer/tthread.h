/* tthread.h - tracer threads: each traces its own share of the program's threads, under one lock they share. */
#ifndef JT_TTHREAD_H
#define JT_TTHREAD_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "cpu.h"

#define JT_MAX_TTHREADS 8

struct jt_tracer;
struct jt_thread;

/*
 * One tracer thread. ptrace ties a tracee to the tracer *thread* that
 * attached it: only that thread may restart it or read its registers, and
 * only it sees its stops (with __WNOTHREAD). Index 0 is the main thread.
 */
/* A wait status a tracer thread waited for and left for its loop (struct jt_tthread.waited). */
struct jt_waited {
	pid_t tid;
	int status;
};

struct jt_tthread {
	struct jt_tracer *tr;		/* the session it serves (opaque here) */
	int index;
	pthread_t thread;
	pid_t ktid;			/* kernel thread id, for tgkill */
	int running;			/* a started tracer thread (index > 0) */
	int ntracees;			/* program threads it traces or is being handed */
	int nactive;			/* of those, threads that hit a breakpoint at least once */
	struct jt_thread *inbox;	/* parked threads handed to it, to seize */
	struct jt_cpu cpu;
	uint64_t events;		/* breakpoint hits it handled */
	uint64_t tick_ms;		/* when its loop last did its periodic work (loop.c) */
	/*
	 * The registers of the stop just reported, read before taking the lock,
	 * and a restart held back to be done after releasing it: system calls
	 * on our own tracee need no lock, and the other tracer threads should
	 * not wait for them.
	 */
	pid_t regs_tid;			/* regs belong to this stop, or 0 */
	arch_regs regs;
	pid_t resume_tid;		/* set resume_regs and continue it, or 0 */
	arch_regs resume_regs;
	/*
	 * Its own unwind scratch (made at its first unwind), so that tracer
	 * threads unwind at the same time, outside the lock; and whether the
	 * stop being handled may release the lock for its unwind: set by the
	 * loop for a stop it dispatches, not for one handled inside work on a
	 * whole process (proc_unwind).
	 */
	struct jt_unwind_ctx *uctx;
	int unwind_unlock;
	/*
	 * Stops and exits that work on a whole process met while it waited for
	 * that process's threads (stopall_wait), of threads it was not
	 * collecting: kept, oldest first, for the loop, which takes them before
	 * it waits again. So no stop is handled inside another's handling (as
	 * strace keeps its pending stops).
	 */
	struct jt_waited *waited;
	size_t nwaited, waited_cap;
	/* tthread_alarm's timer, made at its first use. */
	timer_t alarm;
	int has_alarm;
};

/*
 * The tracer threads of one session and the lock they share. Whoever
 * touches the session (struct jt_tracer) holds lock.
 */
struct jt_tthreads {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a hand-over happened (an inbox filled) */
	pthread_cond_t unwound;		/* the last unwind outside the lock of a process ended */
	struct jt_tthread t[JT_MAX_TTHREADS];
	int n;				/* t[0..n-1] are in use */
	int quit;			/* the other tracer threads: finish */
#ifdef JT_DEBUG
	/* Who holds lock (tthread_lock): "lock held" is an assert (tthread_locked), not prose. */
	pthread_t holder;
	int held;
#endif
};

/*
 * The session lock (set->lock), taken and given back only through these,
 * which in the debug build note its holder; tthread_wait waits on cond (one
 * of set's) with the lock released meanwhile, until ts on UTIL_CLOCK or,
 * with ts NULL, until signalled, and returns pthread's answer.
 */
void tthread_lock(struct jt_tthreads *set);
void tthread_unlock(struct jt_tthreads *set);
/* tthread_lock, but giving up after ms milliseconds: 0 when held, -1 when not. */
int tthread_lock_within(struct jt_tthreads *set, unsigned ms);
int tthread_wait(struct jt_tthreads *set, pthread_cond_t *cond, const struct timespec *ts);

#ifdef JT_DEBUG
/* Non-zero when the calling thread holds set's lock: for DEBUG_ASSERT of a function's precondition. */
int tthread_locked(struct jt_tthreads *set);
#endif

/* Non-zero when the calling thread is tracer thread 0 of set (the main thread): for asserts. */
int tthread_is_first(struct jt_tthreads *set);

/* The calling tracer thread's block (NULL before tthread_init). */
struct jt_tthread *tthread_self(void);

/*
 * Makes the calling thread tracer thread 0 of set, serving tr, and sets up
 * the lock; with prio_inherit, a holder of the lock runs at the priority of
 * its most urgent waiter (the uprobe source's real-time reader). Call it
 * once, before any thread is traced.
 */
void tthread_init(struct jt_tthreads *set, struct jt_tracer *tr, int prio_inherit);

/*
 * Starts tracer threads 1..n-1, each running loop(tt). The signals the main
 * thread acts on (selfsig.h) are blocked in them; only the wake signal,
 * emerg.c's and the faults reach them. Returns how many tracer threads
 * there now are (1 when none could be started).
 */
int tthread_start(struct jt_tthreads *set, int n, void *(*loop)(void *));

/* Tells the other tracer threads to finish (set->quit must be set) and joins them (set->lock held). */
void tthread_join_all(struct jt_tthreads *set);

/* Interrupts tracer thread tt's wait4 so that it looks at its inbox and at the session's requests. */
void tthread_wake(struct jt_tthread *tt);
/* Interrupts tracer thread 0's wait4 (from another thread: a no-op from itself), for work it alone does. */
void tthread_wake_first(struct jt_tthreads *set);
void tthread_wake_all(struct jt_tthreads *set);

/*
 * Sends the calling tracer thread tt its own wake signal in ms milliseconds
 * (0: cancels it), so that a system call that may block for long in the
 * kernel (handover.c's PTRACE_SEIZE, through wake_ptrace) ends. Returns 0,
 * or -1 when no timer can be made.
 */
int tthread_alarm(struct jt_tthread *tt, unsigned ms);

/*
 * PTRACE_SEIZE of tid with options by the calling tracer thread tt, for at
 * most ms milliseconds. It waits in the kernel while another thread of
 * tid's process is in exec, and the exec waits until every other thread of
 * the process is reaped, perhaps by tt itself: a deadlock that a signal
 * does not end (the kernel restarts the request). Returns 0, or -1 with
 * errno set: EINTR when the time ran out (reap what is tt's, try again).
 * A wake noted before the call stays noted.
 */
int tthread_seize(struct jt_tthread *tt, pid_t tid, long options, unsigned ms);

/* The tracer thread with the fewest active tracees. */
struct jt_tthread *tthread_least_loaded(struct jt_tthreads *set);

/* Keeps a wait status for tt's loop, after those kept already. */
void tthread_keep_waited(struct jt_tthread *tt, pid_t tid, int status);
/* Takes kept status i out (0 is the oldest); returns 0, or -1 when there is none. */
int tthread_take_waited(struct jt_tthread *tt, size_t i, struct jt_waited *w);
/* Takes the oldest kept status of tracee tid out into *status; returns 0, or -1 when there is none. */
int tthread_take_waited_of(struct jt_tthread *tt, pid_t tid, int *status);
/* Forgets every kept status and frees their room. */
void tthread_clear_waited(struct jt_tthread *tt);

#endif
