/* snapshot.h - writes the heap of one traced process as a report, now. */
#ifndef JT_SNAPSHOT_H
#define JT_SNAPSHOT_H

struct jt_tracer;
struct jt_proc;

/* Writes a text report (and a JSON snapshot with --json) for p. Returns 0 or -1. */
int snapshot_write(struct jt_tracer *tr, struct jt_proc *p, const char *reason);

#endif
