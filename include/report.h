/* report.h - writes snapshots of the heap as text and as JSON. */
#ifndef JT_REPORT_H
#define JT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "alloc.h"

struct jt_heap;
struct jt_sym;

/* Everything a snapshot needs; the caller owns all of it. */
struct jt_snapshot {
	const char *reason;	/* "exit", "signal", "sigusr1", "detach", "exec", ... */
	int pid;
	const char *command;	/* the program as the user named it, or /proc/PID/exe */
	int exited;		/* 1 when the process is gone */
	int exit_status;	/* valid when exited and !killed_by */
	int killed_by;		/* signal number that killed it, or 0 */
	int attached;		/* 1 when we attached to a running process: older blocks are unknown */
	unsigned ncalls;	/* entries in call_fns / calls */
	const enum jt_fn *call_fns;	/* the functions whose calls are listed, in report order */
	const uint64_t *calls;		/* traced calls per function, nested calls counted once */
	const struct jt_heap *heap;
	struct jt_sym *sym;
	unsigned top;		/* how many stacks the text report lists */
};

/* Writes the human-readable report. Returns 0, or -1 on a write error. */
int report_text(FILE *f, const struct jt_snapshot *s);

/*
 * A JSON report file that stays valid after every snapshot: it holds
 * {"snapshots": [ ... ]} and each report_json_add rewrites the closing "]}".
 */
struct jt_json_out;

/* Opens (truncates) path. Returns NULL with errno set on failure. */
struct jt_json_out *report_json_open(const char *path);
/* Appends one snapshot with all its stacks (not limited by top). Returns 0 or -1. */
int report_json_add(struct jt_json_out *j, const struct jt_snapshot *s);
/* Closes the file. Returns 0 or -1. */
int report_json_close(struct jt_json_out *j);

#endif
