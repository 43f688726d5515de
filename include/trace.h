/* trace.h - the tracer's event loop. */
#ifndef JT_TRACE_H
#define JT_TRACE_H

struct jt_tracer;
struct jt_proc;

/* Catches SIGINT, SIGTERM, SIGHUP, SIGUSR1 for snapshots, and starts the loop's tick. */
void trace_install_signals(void);

/*
 * Runs until the main process exits or cannot be traced. Returns 0, or -1
 * when tracing failed (a message was printed).
 */
int trace_run(struct jt_tracer *tr);

/*
 * Stops every thread of p (PTRACE_INTERRUPT) and waits until each one sits
 * in a stop, handling breakpoint hits on the way without restarting them.
 * Returns 0, or -1 when p vanished.
 */
int trace_wait_stopped(struct jt_tracer *tr, struct jt_proc *p);

/* Restarts every stopped thread of p, delivering any signal held for it. */
void trace_resume_all(struct jt_tracer *tr, struct jt_proc *p);

/*
 * Leaves p exactly as it was: stops all threads, puts hijacked return
 * addresses and breakpoint bytes back, and detaches every thread.
 */
void trace_detach(struct jt_tracer *tr, struct jt_proc *p);

#endif
