/* snapshot.h - writes the heap of one traced process as a report: now, or beside the tracing. */
#ifndef JT_SNAPSHOT_H
#define JT_SNAPSHOT_H

struct jt_tracer;
struct jt_proc;

/* The file formats (--pprof, --folded, --flamegraph, --massif, --csv, --dot): tr->formats has one each. */
#define SNAPSHOT_NFORMATS 6

/*
 * Writes a text report, a JSON snapshot with --json and every file format
 * asked for, for p, now (after the snapshot handed to the worker, if one
 * is). Returns 0, or -1 after saying which could not be written
 * (tr->report_failed is set then).
 */
int snapshot_write(struct jt_tracer *tr, struct jt_proc *p, const char *reason);

/*
 * Takes the snapshot of p now and hands its writing to tr->snap_worker:
 * the program's threads go on as soon as its figures are copied. Returns
 * 0, or 1 when the snapshot handed over last is still being written:
 * none is taken (the caller counts it as passed over).
 */
int snapshot_post(struct jt_tracer *tr, struct jt_proc *p, const char *reason);

/*
 * Waits for the snapshot handed to the worker, if any, and takes what its
 * writers left (a failure, how long they took). Returns 0, or -1 when it
 * could not be written.
 */
int snapshot_sync(struct jt_tracer *tr);

/* Takes the file formats' paths before the run (outfile_open). Returns 0, or -1 after saying which is wrong. */
int snapshot_open_formats(struct jt_tracer *tr);

/* Closes them. Returns 0, or -1 after saying which stream's last writes failed. */
int snapshot_close_formats(struct jt_tracer *tr);

#endif
