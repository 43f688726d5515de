/* leakcheck.h - runs a leak check on a traced process (--leak-check) and keeps its verdict for the reports. */
#ifndef JT_LEAKCHECK_H
#define JT_LEAKCHECK_H

struct jt_tracer;
struct jt_proc;
struct jt_thread;

/*
 * Checks p, every thread of which is stopped already: collects the roots,
 * classifies the live blocks and replaces p->leak (its pause_us the scan's
 * alone, for the caller to widen to the whole stop). Returns 0 or -1.
 */
int leakcheck_stopped(struct jt_tracer *tr, struct jt_proc *p);

/*
 * Stops every thread of p, checks it and lets them all go again. Tracer
 * thread 0, outside any stop's handling (a snapshot of a running process).
 * Returns 0 or -1.
 */
int leakcheck_now(struct jt_tracer *tr, struct jt_proc *p);

/*
 * t stopped at the entry of _exit (p->leak_due): the process is about to
 * end with its memory intact. Stops the other threads, checks p, and lets
 * the others go again; t stays as it is, to be restarted by its caller.
 * Returns 0, or -1 when t (or its process) went away meanwhile.
 */
int leakcheck_at_exit(struct jt_tracer *tr, struct jt_thread *t);

#endif
