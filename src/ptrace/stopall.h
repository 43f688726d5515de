/* stopall.h - work that needs a whole process stopped: stopping every thread of it, stepping one over a breakpoint meanwhile, restarting them all. */
#ifndef JT_STOPALL_H
#define JT_STOPALL_H

#include "stop_event.h"

struct jt_tracer;
struct jt_proc;
struct jt_thread;

/*
 * Stops every thread of p (PTRACE_INTERRUPT) and waits until each one sits
 * in a stop, recording breakpoint hits on the way without restarting them.
 * It never handles a stop of another process, nor does a handler's work
 * (snapshot, leak check, hand-over): what it meets of other threads is kept
 * for the loop (struct jt_tthread.waited).
 * Tracer thread 0 only, the lock held (both checked in the debug build): the threads traced elsewhere are recalled first.
 * Returns 0, or -1 when p vanished.
 */
int stopall_wait(struct jt_tracer *tr, struct jt_proc *p);

/* Steps the threads of p that must step over a breakpoint, then restarts every stopped one. */
void stopall_resume(struct jt_tracer *tr, struct jt_proc *p);
/* stopall_resume for every thread of p but keep (may be NULL), which is left as it is. */
void stopall_resume_others(struct jt_tracer *tr, struct jt_proc *p, const struct jt_thread *keep);

/* Non-zero when no thread of p can run: each sits in a stop, or waits for its vfork child. */
int stopall_is_stopped(struct jt_tracer *tr, struct jt_proc *p);

/* Asks t to stop (PTRACE_INTERRUPT) unless it is stopped or asked already. */
void stopall_interrupt(struct jt_tracer *tr, struct jt_thread *t);

/*
 * A stop of t while we wait for it to stop (thread_wants_stop): it is noted
 * and t held, or let out of a stop where it must not be held (inside a
 * system call) and interrupted again. Returns the decision left to apply.
 */
struct restart stopall_collect(struct jt_tracer *tr, struct jt_thread *t, struct jt_stop *st);

/*
 * t must step over a breakpoint with every other thread of its process
 * stopped. Only tracer thread 0 stops a whole process: it does it at once;
 * another tracer thread hands t to it (or, when it cannot, steps t with the
 * others running).
 */
void stopall_step_or_send(struct jt_tracer *tr, struct jt_thread *t);

/* A thread handed to the calling tracer thread arrived, stopped: hold, step or restart it. */
void stopall_arrived(struct jt_tracer *tr, struct jt_thread *t);

#endif
