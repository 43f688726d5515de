/* snapshot.c - assembles a report of one process from the tracer's tables and hands it to the writers. */
#include <stdio.h>

#include "alloc.h"
#include "proc.h"
#include "report.h"
#include "snapshot.h"
#include "util.h"

int
snapshot_write(struct jt_tracer *tr, struct jt_proc *p, const char *reason)
{
	enum jt_fn fns[FN_REPORTED];
	struct jt_snapshot s = {
		.reason = reason,
		.pid = p->pid,
		.command = p->command,
		.exited = p->exited,
		.exit_status = p->exit_status,
		.killed_by = p->killed_by,
		.attached = p->attached,
		.ncalls = FN_REPORTED,
		.call_fns = fns,
		.calls = p->calls,
		.heap = p->heap,
		.sym = p->sym,
		.top = tr->opt->top,
	};
	int ret = 0;

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
	return ret;
}
