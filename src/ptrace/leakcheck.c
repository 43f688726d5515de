/* leakcheck.c - runs --leak-check on a traced process, held stopped as briefly as it can be, and keeps the verdict in p->leak. */
#include <stdlib.h>

#include "leak.h"
#include "leak_roots.h"
#include "leakcheck.h"
#include "options.h"
#include "proc.h"
#include "stopall.h"
#include "tracer.h"
#include "uprobes.h"
#include "util.h"
#include "worker.h"

int
leakcheck_stopped(struct jt_tracer *tr, struct jt_proc *p)
{
	uint64_t t0 = util_now_us();
	struct leak_roots roots = { 0 };
	struct leak_result *res;
	struct leak_block *b;
	size_t n;
	int ret = -1;

	/* --source uprobe: every allocation its threads made before they stopped counts. */
	uprobes_settle(p->uprobes, NULL);
	b = leak_blocks_of(p->heap, &n);
	if (leak_roots_collect(tr, p, b, n, &roots) < 0) {
		free(b);
		return -1;
	}
	struct leak_input in = {
		.roots = roots.regions,
		.nroots = roots.nregions,
		.words = roots.words,
		.nwords = roots.nwords,
		.vtables = roots.vtables,
		.nvtables = roots.nvtables,
		.texts = roots.texts,
		.ntexts = roots.ntexts,
		.heuristics = tr->opt->leak_heuristics,
		.read = leak_roots_read,	/* the target's memory in bulk (process_vm_readv) */
		.arg = &p->pid,
	};
	res = xcalloc(1, sizeof(*res));
	if (leak_classify(b, n, &in, &res->stats) == 0 && leak_records(b, n, res) == 0) {
		res->heuristics = in.heuristics;
		res->attached = p->attached || p->unseen_blocks;
		res->nthreads = roots.nthreads;
		res->scan_us = util_now_us() - t0;
		res->pause_us = res->scan_us;	/* the caller adds the stop and the restart */
		/* The snapshot being written may read the verdict this one replaces. */
		worker_wait(tr->snap_worker);
		leak_result_clear(p->leak);
		free(p->leak);
		p->leak = res;
		res = NULL;
		ret = 0;
		debug_msg("leak check of %d: %zu blocks, %u threads, %llu bytes of roots and %llu of blocks scanned in %llu us",
			  p->pid, n, roots.nthreads, (unsigned long long)p->leak->stats.root_bytes,
			  (unsigned long long)p->leak->stats.block_bytes, (unsigned long long)p->leak->scan_us);
	}
	if (res) {
		leak_result_clear(res);
		free(res);
	}
	leak_roots_clear(&roots);
	free(b);
	return ret;
}

int
leakcheck_now(struct jt_tracer *tr, struct jt_proc *p)
{
	uint64_t t0 = util_now_us();
	pid_t pid = p->pid;
	int r;

	if (stopall_wait(tr, p) < 0)
		return -1;
	r = leakcheck_stopped(tr, p);
	stopall_resume(tr, p);
	/* The restart is part of the pause: the process runs again only now. */
	if (r == 0 && proc_find(tr, pid) == p)
		p->leak->pause_us = util_now_us() - t0;
	return r;
}

int
leakcheck_at_exit(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	uint64_t t0 = util_now_us();
	pid_t pid = p->pid, tid = t->tid;
	int r;

	p->leak_due = 0;
	/* Held like a thread about to step: stopall_wait stops the others around it. */
	thread_set_state(t, TS_STOPPED);
	if ((p->nthreads > 1 || p->vfork_child) && stopall_wait(tr, p) < 0 &&
	    (proc_find(tr, pid) != p || thread_find(tr, tid) != t))
		return -1;
	if ((r = leakcheck_stopped(tr, p)) < 0)
		error_msg("--leak-check: process %d could not be checked at _exit", pid);
	stopall_resume_others(tr, p, t);
	if (proc_find(tr, pid) != p || thread_find(tr, tid) != t)
		return -1;
	thread_set_state(t, TS_RUNNING);	/* back in the hands of the stop being handled */
	/* Not after a failed check: p->leak is then an earlier snapshot's. */
	if (r == 0)
		p->leak->pause_us = util_now_us() - t0;
	return 0;
}
