/* loop.h - the tracer threads' loops: waiting for stops, the tick, and the end (due.h: the snapshots and signals between stops). */
#ifndef JT_LOOP_H
#define JT_LOOP_H

struct jt_tracer;

/* selfsig_catch (selfsig.h), and starts the loop's tick. */
void loop_install_signals(void);

/*
 * Starts the other tracer threads and runs until the main process exits,
 * is detached, or cannot be traced; every thread is back with the calling
 * (main) thread when it returns. Returns 0, or -1 when tracing failed (a
 * message was printed).
 */
int loop_run(struct jt_tracer *tr);
/*
 * Writes the reports lifecycle left due: of each followed child that ended
 * and each image an exec ended (tr->ended, then freed), and of an attached
 * main process let go at an exec. loop_run does it as it goes; a detach after it calls it too.
 */
void loop_reports_due(struct jt_tracer *tr);

#endif
