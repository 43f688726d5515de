/* sigtrap.h - keeps the program's own SIGTRAP handler in place although our breakpoints raise SIGTRAP. */
#ifndef JT_SIGTRAP_H
#define JT_SIGTRAP_H

struct jt_thread;

/*
 * Learns t's process's SIGTRAP handler; t is stopped (at a SIGTRAP of the
 * program's own about to be delivered, or just attached). Its siginfo is
 * kept. Only processes that catch SIGTRAP pay for it.
 */
void sigtrap_learn(struct jt_thread *t);

/*
 * t, stopped, hit one of our breakpoints (or stepped). When that made the
 * kernel reset the learned handler to SIG_DFL, puts it back, and blocks
 * SIGTRAP in t's mask again. Cheap (one /proc read) when nothing was reset.
 */
void sigtrap_repair(struct jt_thread *t);

/*
 * t, stopped, hit one of our breakpoints in a process whose handler we
 * keep: sigtrap_repair, and a SIGTRAP the program was sent just as t ran
 * our trap byte (the kernel keeps one SIGTRAP pending, the stop then shows
 * the program's) is sent again, so that it is not taken for ours.
 */
void sigtrap_hit(struct jt_thread *t);

/*
 * t is stopped at the delivery of the program's own SIGTRAP, in a process
 * with several threads and a handler we keep. Delivers it, and leaves
 * SIGTRAP unblocked in t while the handler runs (its return restores the
 * mask): blocked, our breakpoints hit in the handler would reset the
 * handler for every thread, and a SIGTRAP reaching another thread before
 * we put it back would kill the process. Returns 0 when delivered (t runs
 * or is gone), 1 when t ended meanwhile (*end: its wait status, which
 * nobody else will see), -1 when the caller delivers it the usual way.
 */
int sigtrap_deliver(struct jt_thread *t, int *end);

#endif
