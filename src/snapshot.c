/* snapshot.c - assembles a report of one process from the tracer's tables and hands it to the writers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "heap.h"
#include "leakcheck.h"
#include "proc.h"
#include "report.h"
#include "snapshot.h"
#include "util.h"

/*
 * The file of snapshot seq for a format's FILE: FILE itself, each snapshot
 * replacing the last; with --interval, FILE with the number before its
 * extension (heap.svg -> heap.3.svg, profile -> profile.3), so every
 * snapshot is kept and each still opens as its kind. Returns a malloc'ed path.
 */
static char *
snapshot_path(const struct jt_options *o, const char *path, unsigned seq)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t len = strlen(path) + 16;
	char *out = xmalloc(len);

	if (o->interval <= 0)
		snprintf(out, len, "%s", path);
	else if (!dot || dot == base)
		snprintf(out, len, "%s.%u", path, seq);
	else
		snprintf(out, len, "%.*s.%u%s", (int)(dot - path), path, seq, dot);
	return out;
}

/* The file formats a user asked for: each option's path and its writer. */
static int
snapshot_formats(const struct jt_options *o, const struct jt_snapshot *s)
{
	const struct {
		const char *path, *what;
		int (*write)(const char *, const struct jt_snapshot *);
	} fmts[] = {
		{ o->pprof_path, "pprof profile", report_pprof },
		{ o->folded_path, "folded stacks", report_folded },
		{ o->flame_path, "flame graph", report_flamegraph },
		{ o->massif_path, "massif file", report_massif },
		{ o->csv_path, "CSV file", report_csv },
		{ o->dot_path, "DOT graph", report_dot },
	};
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		char *path;

		if (!fmts[i].path)
			continue;
		path = snapshot_path(o, fmts[i].path, s->seq);
		if (fmts[i].write(path, s) < 0) {
			perror_msg("cannot write the %s '%s'", fmts[i].what, path);
			ret = -1;
		}
		free(path);
	}
	return ret;
}

int
snapshot_write(struct jt_tracer *tr, struct jt_proc *p, const char *reason)
{
	const struct jt_options *o = tr->opt;
	enum jt_fn fns[FN_REPORTED];
	struct jt_snapshot s = {
		.reason = reason,
		.pid = p->pid,
		.command = p->command,
		.exe = p->exe,
		.exe_named = p->exe_named,
		.exited = p->exited,
		.exit_status = p->exit_status,
		.killed_by = p->killed_by,
		.attached = p->attached,
		.ncalls = FN_REPORTED,
		.call_fns = fns,
		.calls = p->calls,
		.heap = p->heap,
		.sym = p->sym,
		.top = o->top,
		.sort = (enum report_cost)o->sort,
		.cost = (enum report_cost)o->cost,
		.min_size = o->min_size,
		.max_size = o->max_size ? o->max_size : UINT64_MAX,
		.supp = tr->supp,
		.seq = ++tr->nsnapshots,
	};
	const struct jt_heap_sample *tl;
	size_t n;
	int ret = 0;
	int exec = strcmp(reason, "exec") == 0;

	/* A process that still runs is checked now; one that ended was checked at its _exit. */
	if (o->leak_check && !p->exited && !exec && !p->vfork_child && leakcheck_now(tr, p) < 0)
		error_msg("--leak-check: process %d could not be checked", p->pid);
	s.leak_check = o->leak_check && !p->vfork_child;
	s.leak = exec ? NULL : p->leak;	/* an exec left nothing of the image to check */
	s.show_leak_kinds = o->show_leak_kinds;

	/* The timeline ends with this moment, whatever the program did last. */
	heap_sample(p->heap, 1);
	tl = heap_timeline(p->heap, &n);
	s.time_ms = n ? tl[n - 1].time_ms : 0;
	for (int i = 0; i < FN_REPORTED; i++)
		fns[i] = (enum jt_fn)i;
	if (report_text(tr->out, &s) < 0) {
		perror_msg("cannot write the report");
		ret = -1;
	}
	fflush(tr->out);
	if (tr->json && report_json_add(tr->json, &s) < 0) {
		perror_msg("cannot write the JSON report");
		ret = -1;
	}
	if (snapshot_formats(o, &s) < 0)
		ret = -1;
	return ret;
}
