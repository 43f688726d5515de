/* handover.h - moving a stopped thread from one tracer thread to another: rebalancing, and recalling a whole process to tracer thread 0. */
#ifndef JT_HANDOVER_H
#define JT_HANDOVER_H

#include <stdint.h>
#include <sys/types.h>

#include "tthread.h"

struct jt_tracer;
struct jt_proc;
struct jt_thread;

/*
 * Hands t, stopped and traced by the calling thread, to tracer thread `to`.
 * t is parked first, so it cannot run into a breakpoint while nobody traces
 * it: every signal blocked, and its pc on a system call instruction that
 * calls pause() (on a jump to itself under seccomp, which might forbid
 * pause()). Its real registers and signal mask travel with it, and a signal
 * held for it is queued again. Returns 0, or -1 when it could not be parked
 * (it is then still ours, stopped, unchanged).
 */
int handover_send(struct jt_thread *t, struct jt_tthread *to);

/*
 * Seizes every thread in the calling tracer thread's inbox, gives each its
 * real registers and signal mask back, and calls tr->arrived(tr, t) with
 * t stopped (thread_is_stopped(t)). Threads that
 * died on the way are freed.
 */
void handover_receive(struct jt_tthread *tt);

/*
 * How long one PTRACE_SEIZE of a thread may wait (tthread_seize). It waits
 * only when another thread of the process is in exec: the exec holds the
 * lock that PTRACE_SEIZE takes until every other thread of the process is
 * reaped, some perhaps by the tracer thread that waits (a deadlock, seen
 * in exec.t's "a thread other than main execs", possible in an attach
 * too). The kernel restarts the request after any signal, so only
 * wake_ptrace's window ends it. Between tries: handover_reap_own.
 */
#define HANDOVER_SEIZE_MS 10

/*
 * Takes what self's own tracees report, without waiting: kept for its
 * loop, or passed on when it is another tracer thread's. So a thread that
 * exited is reaped: while a recall waits, or a seize waits for an exec. A
 * thread that execs waits in the kernel until every other thread of its
 * process is reaped, and cannot stop before.
 */
void handover_reap_own(struct jt_tracer *tr, struct jt_tthread *self);

/*
 * Where t, stopped and about to be restarted, should go to keep the busy
 * threads spread over the tracer threads: the one with the fewest active
 * tracees when t's own has two more; NULL to stay. The main thread of each
 * process stays with the tracer thread that traces it, so its exit is seen
 * by its parent.
 */
struct jt_tthread *handover_rebalance_due(struct jt_tracer *tr, struct jt_thread *t);

/* Hands t over where handover_rebalance_due says. Returns 1 when it was handed over, 0 when it is still ours. */
int handover_rebalance(struct jt_tracer *tr, struct jt_thread *t);

/* Non-zero while some thread of p is traced by, or on its way to, a tracer thread other than self. */
int handover_elsewhere(struct jt_tracer *tr, struct jt_proc *p, struct jt_tthread *self);


/*
 * Does the calling tracer thread's held-back restart, then waits up to ms on
 * tr's cond (its lock held, released meanwhile): for a hand-over, or for
 * time to pass.
 */
void handover_wait(struct jt_tracer *tr, unsigned ms);

/*
 * The tracer thread that traces tid when it is not tt, which waited for
 * its stop (status): NULL when it is tt's own. The kernel reports a child's
 * stops to the thread that forked it, __WNOTHREAD or not, when its tracer
 * is of the same thread group: so tracer thread 0 meets the stops of the
 * launched program's main thread after a thread of it handed to another
 * tracer thread exec'd and took the main thread's tid. The exec's own stop
 * comes under a tid still in the tables as tt's (the old main thread): only
 * the kernel's TracerPid tells whose it is.
 */
struct jt_tthread *handover_tracer_of(struct jt_tracer *tr, struct jt_tthread *tt, pid_t tid, int status);
/* Gives tracer thread to a stop of its tracee tid that tt waited for, and wakes it. */
void handover_pass_on(struct jt_tthread *tt, struct jt_tthread *to, pid_t tid, int status);

/*
 * Tracer thread 0: brings every thread of p over from the other tracer
 * threads, stopped. Meanwhile it reaps its own tracees' stops and exits
 * (kept for its loop), so that a thread that execs on another tracer
 * thread, which waits for them, can end its exec and stop.
 */
void handover_recall(struct jt_tracer *tr, struct jt_proc *p);

/* Another tracer thread: while a recall is on, stops its threads of that process and hands them over. */
void handover_serve_recall(struct jt_tracer *tr, struct jt_tthread *tt);

#endif
