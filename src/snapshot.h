/* snapshot.h - writes the heap of one traced process as a report, now. */
#ifndef JT_SNAPSHOT_H
#define JT_SNAPSHOT_H

struct jt_tracer;
struct jt_proc;

/* The file formats (--pprof, --folded, --flamegraph, --massif, --csv, --dot): tr->formats has one each. */
#define SNAPSHOT_NFORMATS 6

/*
 * Writes a text report, a JSON snapshot with --json and every file format
 * asked for, for p. Returns 0, or -1 after saying which could not be
 * written (tr->report_failed is set then).
 */
int snapshot_write(struct jt_tracer *tr, struct jt_proc *p, const char *reason);

/* Takes the file formats' paths before the run (outfile_open). Returns 0, or -1 after saying which is wrong. */
int snapshot_open_formats(struct jt_tracer *tr);

/* Closes them. Returns 0, or -1 after saying which stream's last writes failed. */
int snapshot_close_formats(struct jt_tracer *tr);

#endif
