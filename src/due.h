/* due.h - what falls due between two stops: snapshots (--interval, --duration, SIGUSR1, SIGINT), the detach after, SIGTSTP. */
#ifndef JT_DUE_H
#define JT_DUE_H

#include <stdint.h>

struct jt_tracer;

/*
 * Starts the clock of the due snapshots: the main process's time_ms, now,
 * and the first due time; with --interval or --duration, the timer that
 * hurries and wakes the calling thread, tracer thread 0, for each.
 */
void due_start(struct jt_tracer *tr);
/* Deletes that timer: no more hurry or wake-up for tracer thread 0. */
void due_stop(void);
/*
 * Between two stops, on tracer thread 0: a SIGTSTP's answer; the snapshot
 * that is due, if any, or asked for by a signal, and the next due time;
 * then the stop a signal (or --duration's end) asked for: every process
 * detached when attached or when the signal ends jmptrace, else the signal
 * passed on to the launched program (but SIGINT, which it gets itself).
 */
void due_check(struct jt_tracer *tr);
/*
 * Called by tracer thread 0 after each piece of its work, begun at
 * since_us: the one under way at the due time held the snapshot up, and is
 * its reason if it is late.
 */
void due_work_done(struct jt_tracer *tr, const char *what, uint64_t since_us);
/* How long to wait for other work, at most ms: not past the next due time. */
unsigned due_wait_ms(const struct jt_tracer *tr, unsigned ms);

#endif
