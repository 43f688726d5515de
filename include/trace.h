/* trace.h - what a stop means, and the work that needs a whole process stopped. */
#ifndef JT_TRACE_H
#define JT_TRACE_H

#include <sys/types.h>

struct jt_tracer;
struct jt_proc;
struct jt_thread;
struct jt_worker;

/* Handles one wait status of one of the calling tracer thread's tracees (tr->lock held). */
void trace_dispatch(struct jt_tracer *tr, pid_t tid, int status);

/*
 * Does the restart the last breakpoint hit held back until the lock is
 * released: sets the registers and continues the thread. Only its own
 * tracer thread calls it, with or without the lock.
 */
void trace_flush(struct jt_worker *w);

/* A thread handed to the calling tracer thread arrived, stopped: hold, step or restart it. */
void trace_arrived(struct jt_tracer *tr, struct jt_thread *t);

/* Restarts a stopped thread, delivering the signal held for it, or listening in a group-stop. */
void trace_restart(struct jt_tracer *tr, struct jt_thread *t);

/* Tracer thread 0: brings every thread of p over from the other tracer threads, stopped. */
void trace_recall(struct jt_tracer *tr, struct jt_proc *p);

/* Another tracer thread: while a recall is on, stops its threads of that process and hands them over. */
void trace_serve_recall(struct jt_tracer *tr, struct jt_worker *w);

/* Non-zero while some thread of p is traced by, or on its way to, a tracer thread other than self. */
int trace_elsewhere(struct jt_tracer *tr, struct jt_proc *p, struct jt_worker *self);

/* Waits up to ms on tr->cond (tr->lock held, released meanwhile): for a hand-over, or for time to pass. */
void trace_cond_wait(struct jt_tracer *tr, unsigned ms);

/*
 * Stops every thread of p (PTRACE_INTERRUPT) and waits until each one sits
 * in a stop, handling breakpoint hits on the way without restarting them.
 * Returns 0, or -1 when p vanished.
 */
int trace_wait_stopped(struct jt_tracer *tr, struct jt_proc *p);

/* Restarts every stopped thread of p, delivering any signal held for it. */
void trace_resume_all(struct jt_tracer *tr, struct jt_proc *p);

/* Non-zero when no thread of p can run: each sits in a stop, or waits for its vfork child. */
int trace_all_stopped(struct jt_tracer *tr, struct jt_proc *p);

/* --pin: a thread we let go gets the affinity it had before we pinned it. */
void trace_unpin(struct jt_thread *t);

#endif
