/* snapshot.c - takes a report of one process from the tracer's tables and runs its writers, now or beside the tracing. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cpu.h"
#include "growth.h"
#include "heap.h"
#include "image.h"
#include "leakcheck.h"
#include "options.h"
#include "outfile.h"
#include "proc.h"
#include "report.h"
#include "snapshot.h"
#include "sym.h"
#include "testfault.h"
#include "tracer.h"
#include "uprobes.h"
#include "util.h"
#include "worker.h"

/*
 * The file of snapshot seq for -o's or a format's FILE: FILE itself, each
 * snapshot replacing the last; with --interval, FILE with the number before
 * its extension (heap.svg -> heap.3.svg, report.txt -> report.3.txt,
 * profile -> profile.3), so every snapshot is kept and each still opens as
 * its kind. A followed child's (child, its pid, not 0) has the pid first
 * (report.4242.txt, report.4242.3.txt), so that no process's report
 * replaces another's. The report of an image that exec number image (from
 * 1) of process child ended has ".exec" and that number after the pid
 * (report.4242.exec1.txt), so that the program the process became keeps
 * the name it would have had. Returns a malloc'ed path.
 */
static char *
snapshot_path(const struct jt_options *o, const char *path, unsigned seq, pid_t child, unsigned image)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t stem = dot && dot != base ? (size_t)(dot - path) : strlen(path);
	size_t len = strlen(path) + 64;
	char *out = xmalloc(len), num[64] = "";
	int n = 0;

	if (child > 0)
		n += snprintf(num + n, sizeof(num) - n, ".%d", (int)child);
	if (image > 0)
		n += snprintf(num + n, sizeof(num) - n, ".exec%u", image);
	if (o->interval > 0)
		snprintf(num + n, sizeof(num) - n, ".%u", seq);
	snprintf(out, len, "%.*s%s%s", (int)stem, path, num, path + stem);
	return out;
}

/* The file formats: each option's path, what it is called, and its writer, in tr->formats' order. */
struct snapshot_format {
	const char *what;
	int (*write)(FILE *, const struct jt_snapshot *);
};

_Static_assert(ARRAY_SIZE(((struct jt_tracer *)0)->formats) == SNAPSHOT_NFORMATS, "one output per format");

static const struct snapshot_format snapshot_fmts[SNAPSHOT_NFORMATS] = {
	{ "pprof profile", report_pprof },
	{ "folded stacks", report_folded },
	{ "flame graph", report_flamegraph },
	{ "massif file", report_massif },
	{ "CSV file", report_csv },
	{ "DOT graph", report_dot },
};

static const char *
snapshot_fmt_path(const struct jt_options *o, int i)
{
	const char *paths[SNAPSHOT_NFORMATS] = {
		o->pprof_path, o->folded_path, o->flame_path, o->massif_path, o->csv_path, o->dot_path,
	};

	return paths[i];
}

int
snapshot_open_formats(struct jt_tracer *tr)
{
	for (int i = 0; i < SNAPSHOT_NFORMATS; i++) {
		const char *path = snapshot_fmt_path(tr->opt, i);

		if (path && !(tr->formats[i] = outfile_open(path))) {
			perror_msg("cannot write the %s '%s'", snapshot_fmts[i].what, path);
			return -1;
		}
	}
	return 0;
}

int
snapshot_close_formats(struct jt_tracer *tr)
{
	int ret = 0;

	for (int i = 0; i < SNAPSHOT_NFORMATS; i++) {
		if (outfile_close(tr->formats[i]) < 0) {
			perror_msg("cannot write the %s '%s'", snapshot_fmts[i].what, snapshot_fmt_path(tr->opt, i));
			ret = -1;
		}
		tr->formats[i] = NULL;
	}
	return ret;
}

/*
 * Writes snapshot s to out, the output named opt_path, by the one rule of
 * every output but JSON: a stream gets every snapshot after the last; a file
 * holds one, replaced whole by the next, or with --interval numbered.
 */
static int
snapshot_file(struct jt_tracer *tr, struct jt_outfile *out, const char *opt_path, const char *what,
	      int (*write)(FILE *, const struct jt_snapshot *), const struct jt_snapshot *s)
{
	/*
	 * -f: a followed child's report goes to a file of its own, named with
	 * its pid (strace -ff's way); so does the report of an image an exec
	 * ended, the main process's too.
	 */
	pid_t child = (tr->opt->follow_forks && s->pid != tr->main_pid) || s->image_ended ? s->pid : 0;
	char *path = snapshot_path(tr->opt, opt_path, s->seq, child, s->image_ended);
	FILE *f = outfile_begin(out, outfile_is_stream(out) ? NULL : path);
	int ret = -1;

	if (f) {
		write(f, s);
		ret = outfile_commit(out);
	}
	/* A failure comes back at a later content's commit: it names the file that failed. */
	if (ret < 0)
		perror_msg("cannot write the %s '%s'", what, f ? outfile_failed(out) : outfile_is_stream(out) ? opt_path : path);
	free(path);
	return ret;
}

static int
snapshot_format(struct jt_tracer *tr, int i, const struct jt_snapshot *s)
{
	return snapshot_file(tr, tr->formats[i], snapshot_fmt_path(tr->opt, i), snapshot_fmts[i].what,
			     snapshot_fmts[i].write, s);
}

/* The functions whose calls a report lists, the standard ones then those named by --alloc, and their calls. */
static unsigned
snapshot_call_fns(const struct jt_proc *p, enum jt_fn *fns, uint64_t *calls)
{
	unsigned n = 0;

	for (int fn = 0; fn < alloc_fn_end(); fn++)
		if (alloc_fn_reported(fn)) {
			fns[n] = (enum jt_fn)fn;
			calls[n++] = p->calls[fn];
		}
	return n;
}

/*
 * One snapshot as its writers read it, owned: the heap's figures frozen
 * (heap_freeze) and copies of what the tracing changes, so that the
 * writers may run on the worker while the tracing goes on. What it only
 * points to (the symbolizer, the growth history and the leak verdict of
 * the process) changes only while the worker waits (worker_wait).
 */
struct snapshot_job {
	struct jt_tracer *tr;
	struct jt_snapshot s;
	struct jt_due due;
	char late_why[sizeof(((struct jt_tracer *)0)->late_why)];	/* due.late_why's: tr's changes on */
	enum jt_fn fns[FN_MAX];
	uint64_t calls[FN_MAX];
	uint64_t all_calls[FN_MAX];	/* p->calls: --pages' functions are read from it */
	struct jt_heap *heap, *pages;
	char *command, *exe, *exe_named;
	struct jt_untraced *untraced;
	int beside;			/* its writers run on the worker, beside the tracing */
	/* Set by the writers: a report could not be written; how long they took. */
	int failed;
	uint64_t took_ms;
};

static char *
snapshot_strdup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* Copies p's untraced functions: an image's setup adds to them. */
static struct jt_untraced *
snapshot_untraced(const struct jt_proc *p)
{
	struct jt_untraced *v = xmalloc((p->nuntraced ? p->nuntraced : 1) * sizeof(*v));

	for (size_t i = 0; i < p->nuntraced; i++) {
		v[i] = p->untraced[i];
		v[i].module = snapshot_strdup(p->untraced[i].module);
		v[i].reason = snapshot_strdup(p->untraced[i].reason);
	}
	return v;
}

static void
snapshot_job_free(struct snapshot_job *j)
{
	heap_destroy(j->heap);
	heap_destroy(j->pages);
	free(j->command);
	free(j->exe);
	free(j->exe_named);
	for (size_t i = 0; j->untraced && i < j->s.nuntraced; i++) {
		free(j->untraced[i].module);
		free(j->untraced[i].reason);
	}
	free(j->untraced);
	free(j);
}

/*
 * How late a snapshot that fell due is taken: by its own time_ms, the
 * figure a reader compares its due_ms with. Measured when due_check
 * looked, it read 15-20 ms less where tracer thread 0 then waited for a
 * CPU (options.t, 1 run in some 20), and a snapshot late by that much
 * said neither that nor why. The reason the caller gave stays only when
 * it is late (copied: tr's changes on).
 */
static void
snapshot_late(struct snapshot_job *j, const char *reason)
{
	struct jt_due *d = &j->due;

	d->late_ms = j->s.time_ms > d->due_ms ? j->s.time_ms - d->due_ms : 0;
	if (d->late_ms <= JT_DUE_LATE_MS || !d->late_why) {
		d->late_why = NULL;
		return;
	}
	snprintf(j->late_why, sizeof(j->late_why), "%s", d->late_why);
	d->late_why = j->late_why;
	debug_msg("snapshot %u (%s) is %llu ms late, due at %llu ms: %s", j->s.seq, reason,
		  (unsigned long long)d->late_ms, (unsigned long long)d->due_ms, d->late_why);
}

/*
 * Makes the snapshot of p now, with the session lock held: the events
 * until now applied, the leak check run, the figures frozen. Quick but
 * for a leak check: the writers come after (snapshot_run).
 */
static struct snapshot_job *
snapshot_take(struct jt_tracer *tr, struct jt_proc *p, const char *reason)
{
	const struct jt_options *o = tr->opt;
	struct snapshot_job *j = xcalloc(1, sizeof(*j));
	struct jt_snapshot *s = &j->s;
	const struct jt_heap_sample *tl;
	size_t n, npg = 0;
	int exec = strcmp(reason, "exec") == 0;

	/* --source uprobe: the snapshot counts every event made until now. */
	uprobes_settle(tr->uprobes, NULL);
	/* And it says which breakpoints the kernel took since the last tick (of a running image). */
	if (!p->exited && !p->image_ended)
		image_check_taken(tr, p);
	j->tr = tr;
	j->command = snapshot_strdup(p->command);
	j->exe = snapshot_strdup(p->exe);
	j->exe_named = snapshot_strdup(p->exe_named);
	j->untraced = snapshot_untraced(p);
	memcpy(j->all_calls, p->calls, sizeof(j->all_calls));
	if (tr->due)
		j->due = *tr->due;
	*s = (struct jt_snapshot){
		.reason = reason,
		.pid = p->pid,
		.command = j->command,
		.exe = j->exe,
		.exe_named = j->exe_named,
		.exited = p->exited,
		.exit_status = p->exit_status,
		.killed_by = p->killed_by,
		.attached = p->attached,
		.image_ended = p->image_ended,
		.execs = p->execs,
		.ncalls = snapshot_call_fns(p, j->fns, j->calls),
		.call_fns = j->fns,
		.calls = j->calls,
		.sym = p->sym,
		.top = o->top,
		.top_rest = o->top_rest == UINT_MAX || o->top_rest > o->top ? o->top : o->top_rest,
		.sections = o->sections,
		.sort = (enum report_cost)o->sort,
		.cost = (enum report_cost)o->cost,
		.min_size = o->min_size,
		.max_size = o->max_size ? o->max_size : UINT64_MAX,
		.supp = tr->supp,
		.wrap = tr->wrap,
		.seq = ++tr->nsnapshots,
		.untraced = j->untraced,
		.nuntraced = p->nuntraced,
		.source_uprobe = tr->uprobes != NULL,
		.lost_events = uprobes_lost(tr->uprobes),
		.older_than_ms = (uint64_t)(o->older_than * 1000 + 0.5),
		.due = tr->due ? &j->due : NULL,
		.skipped = tr->due_skipped,
		.longest_write_ms = tr->due_longest_ms,
		.growth = p->growth,
	};

	/* A process that still runs is checked now; one that ended was checked at its _exit. */
	if (o->leak_check && !p->exited && !exec && !p->vfork_child && leakcheck_now(tr, p) < 0)
		error_msg("--leak-check: process %d could not be checked", p->pid);
	s->leak_check = o->leak_check && !p->vfork_child;
	s->leak = exec ? NULL : p->leak;	/* an exec left nothing of the image to check */
	s->show_leak_kinds = o->show_leak_kinds;

	/* The timeline ends with this moment, whatever the program did last. */
	heap_sample(p->heap, 1);
	tl = heap_timeline(p->heap, &n);
	s->time_ms = n ? tl[n - 1].time_ms : 0;
	if (tr->due)
		snapshot_late(j, reason);
	/* Two snapshots in one ms share the last sample, which the second updates: it lists it again. */
	s->timeline_from = p->json_timeline < n ? p->json_timeline : n ? n - 1 : 0;
	if (p->pages) {
		heap_sample(p->pages, 1);
		heap_timeline(p->pages, &npg);
		s->pages_calls = &j->all_calls[FN_MMAP];
		s->pages_timeline_from = p->json_pages_timeline < npg ? p->json_pages_timeline : npg ? npg - 1 : 0;
		s->pages = j->pages = heap_freeze(p->pages, s->pages_timeline_from);
	}
	/* Every writer reads the live figures of this view: the blocks' ages, --older-than's filter. */
	heap_view_begin(p->heap, s->time_ms, s->older_than_ms);
	/* GROWTH counts the blocks every other figure of the snapshot counts: the view's. */
	growth_record(p->growth, p->heap, s->time_ms);
	s->heap = j->heap = heap_freeze(p->heap, s->timeline_from);
	heap_view_end(p->heap);
	p->json_timeline = n;
	p->json_pages_timeline = npg;
	/* Every writer but JSON names frames as --full-names says (sym_resolve's jt_frame.name). */
	sym_set_full_names(p->sym, o->full_names);
	/* A test's stand-in for a snapshot that holds the lock long (a leak check of a big heap). */
	testfault_slow("snapshot");
	return j;
}

/* The text report: made whole, then written at once, so that no line of jmptrace's comes in its middle on stderr. */
static int
snapshot_text(struct jt_tracer *tr, const struct jt_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int ret = -1;

	if (mem && report_text(mem, s) == 0 && fclose(mem) == 0) {
		mem = NULL;
		if (fwrite(buf, 1, len, tr->out) == len && fflush(tr->out) == 0)
			ret = 0;
	}
	if (mem)
		fclose(mem);
	free(buf);
	return ret;
}

/* The writers of one snapshot: the text report, --json, --html and the file formats. On the worker, or inline. */
static void
snapshot_run(void *arg)
{
	struct snapshot_job *j = arg;
	struct jt_tracer *tr = j->tr;
	const struct jt_options *o = tr->opt;
	const struct jt_snapshot *s = &j->s;
	uint64_t t0 = util_now_us();
	int ret = 0, text;

	/*
	 * On the worker: idle-class while a CPU is spare, as a tracer thread.
	 * In SCHED_OTHER it took the CPU the tracer and the program take turns
	 * on, and the program's thread was woken on the other at every stop
	 * (7% of python3's stops crossed CPUs under --interval 0.5, 0.2% so).
	 * On a busy host, SCHED_OTHER: an idle-class job would starve.
	 */
	if (j->beside)
		cpu_adapt_burst(&tr->snap_cpu);
	/* A test's stand-in for writers that take long (a big program's), after the snapshot's time is taken. */
	testfault_slow("writers");
	/* -o's file follows the formats' rule. */
	if (tr->out_file)
		text = snapshot_file(tr, tr->out_file, o->out_path, "report", report_text, s);
	else if ((text = snapshot_text(tr, s)) < 0)
		perror_msg("cannot write the report '(stderr)'");
	if (text < 0)
		ret = -1;
	if (tr->json && report_json_add(tr->json, s) < 0) {
		perror_msg("cannot write the JSON report '%s'", o->json_path);
		ret = -1;
	}
	if (tr->html && report_html_add(tr->html, s) < 0) {
		perror_msg("cannot write the HTML report '%s'", o->html_path);
		ret = -1;
	}
	for (int i = 0; i < SNAPSHOT_NFORMATS; i++)
		if (tr->formats[i] && snapshot_format(tr, i, s) < 0)
			ret = -1;
	j->failed = ret < 0;
	j->took_ms = (util_now_us() - t0) / 1000;
}

/* What a job's writers left for the session (the lock held), and the job freed. Returns 0, or -1 when a report failed. */
static int
snapshot_done(struct jt_tracer *tr, struct snapshot_job *j)
{
	int failed = j->failed;

	if (failed)
		tr->report_failed = 1;
	if (j->took_ms > tr->due_longest_ms)
		tr->due_longest_ms = j->took_ms;
	snapshot_job_free(j);
	return failed ? -1 : 0;
}

int
snapshot_sync(struct jt_tracer *tr)
{
	struct snapshot_job *j = tr->snap_job;

	worker_wait(tr->snap_worker);
	tr->snap_job = NULL;
	return j ? snapshot_done(tr, j) : 0;
}

int
snapshot_write(struct jt_tracer *tr, struct jt_proc *p, const char *reason)
{
	struct snapshot_job *j;

	/* Files are written in the order their snapshots were taken. */
	snapshot_sync(tr);
	j = snapshot_take(tr, p, reason);
	snapshot_run(j);
	return snapshot_done(tr, j);
}

int
snapshot_post(struct jt_tracer *tr, struct jt_proc *p, const char *reason)
{
	struct snapshot_job *j;

	if (tr->snap_job && worker_busy(tr->snap_worker)) {
		/* Late: out of SCHED_IDLE, on a host that became busy it could starve. */
		worker_hurry(tr->snap_worker);
		return 1;
	}
	snapshot_sync(tr);
	j = snapshot_take(tr, p, reason);
	j->beside = 1;
	if (!tr->snap_worker || worker_post(tr->snap_worker, snapshot_run, j) < 0) {
		j->beside = 0;
		/* No thread for it: written now, as before there was one. */
		snapshot_run(j);
		snapshot_done(tr, j);
		return 0;
	}
	tr->snap_job = j;
	return 0;
}
