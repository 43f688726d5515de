/* main.c - setup, the run (launched or attached) and exit status of jmptrace; the only place that exits. */
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "cmdline.h"
#include "cpu.h"
#include "detach.h"
#include "diff.h"
#include "emerg.h"
#include "image.h"
#include "launch.h"
#include "loop.h"
#include "named.h"
#include "options.h"
#include "outfile.h"
#include "proc.h"
#include "report.h"
#include "selfsig.h"
#include "sigtrap.h"
#include "snapshot.h"
#include "stopall.h"
#include "supp.h"
#include "tracer.h"
#include "tthread.h"
#include "uevent.h"
#include "unwind.h"
#include "uprobes.h"
#include "util.h"
#include "worker.h"
#include "wrap.h"

/*
 * Every output is taken before the program runs, so that a path that
 * cannot be written is said at once (exit 1), not after the whole run:
 * streams are opened, files checked (outfile.h). What creates a file
 * comes last, so that a refusal leaves nothing behind: --json. -o's file
 * is written at each snapshot, by the formats' rule (snapshot.c).
 */
static int
open_outputs(struct jt_tracer *tr, const struct jt_options *o)
{
	tr->out = stderr;
	tr->snap_worker = worker_new();
	cpu_init(&tr->snap_cpu);
	if (!(tr->supp = supp_load(o->supp_path, o->no_default_supp)) || snapshot_open_formats(tr) < 0)
		return -1;
	if (!o->show_runtime)
		supp_add_runtime(tr->supp);
	tr->wrap = wrap_new();
	for (unsigned i = 0; i < o->nalloc_fn; i++)
		wrap_add(tr->wrap, o->alloc_fn[i], NULL, 0);	/* checked by cmdline_parse */
	if (o->out_path && !(tr->out_file = outfile_open(o->out_path))) {
		perror_msg("cannot write the report '%s'", o->out_path);
		return -1;
	}
	if (o->json_path && !(tr->json = report_json_open(o->json_path))) {
		perror_msg("cannot write the JSON report '%s'", o->json_path);
		return -1;
	}
	if (o->html_path && !(tr->html = report_html_open(o->html_path))) {
		perror_msg("cannot write the HTML report '%s'", o->html_path);
		return -1;
	}
	return 0;
}

/* Closes the reports (a failed last write sets report_failed) and frees every table, so that leak checkers see a clean exit. */
static void
close_outputs(struct jt_tracer *tr)
{
	/* The last snapshot handed to the worker is written first (a failure sets report_failed). */
	snapshot_sync(tr);
	worker_free(tr->snap_worker);
	tr->snap_worker = NULL;
	if (tr->json && report_json_close(tr->json) < 0) {
		perror_msg("cannot write the JSON report '%s'", tr->opt->json_path);
		tr->report_failed = 1;
	}
	tr->json = NULL;
	if (tr->html && report_html_close(tr->html) < 0) {
		perror_msg("cannot write the HTML report '%s'", tr->opt->html_path);
		tr->report_failed = 1;
	}
	tr->html = NULL;
	if (snapshot_close_formats(tr) < 0)
		tr->report_failed = 1;
	supp_free(tr->supp);
	tr->supp = NULL;
	wrap_free(tr->wrap);
	tr->wrap = NULL;
	if (tr->out_file && outfile_close(tr->out_file) < 0) {
		perror_msg("cannot write the report '%s'", tr->opt->out_path);
		tr->report_failed = 1;
	}
	tr->out_file = NULL;
	tr->out = NULL;
	/* The reader ends first; the events close with their threads (the kernel removes the probes). */
	uprobes_free(tr->uprobes);
	tr->uprobes = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		while (tr->threads[i])
			thread_free(tr, tr->threads[i]);
	while (tr->procs)
		proc_free(tr, tr->procs);
	/* The tracer threads' unwind scratch (the other tracer threads are joined by now). */
	for (int i = 0; i < JT_MAX_TTHREADS; i++) {
		unwind_ctx_free(tr->tthreads.t[i].uctx);
		tr->tthreads.t[i].uctx = NULL;
	}
}

/*
 * Attaches to process pid and sets up its image: p is left running, traced.
 * Returns 0, or jmptrace's exit status after saying why (the process let go).
 */
static int
attach_setup(struct jt_tracer *tr, pid_t pid, struct jt_proc **pp)
{
	struct jt_proc *p;
	struct jt_thread *t;

	/*
	 * Before the attach: an exec met while the threads are stopped is the
	 * main process's (not an unfollowed child's, which is let go and
	 * forgotten: the attach then failed without a word), and its image is
	 * not the launch's first (which a failed setup may kill).
	 */
	tr->main_pid = pid;
	tr->image_seen = 1;
	if (attach_process(tr, pid, pp) < 0)
		return 1;
	p = *pp;
	if (tr->uprobes && uprobes_start(tr->uprobes) < 0) {
		detach_all(tr);
		return 1;
	}
	/* A thread may be in its SIGTRAP handler already: learn the handler to keep. */
	if ((t = thread_find(tr, pid)) && t->state != TS_GROUP_STOPPED)
		sigtrap_learn(t);
	if (image_setup(p) < 0) {
		detach_all(tr);
		return 1;
	}
	/* Its libraries are loaded: a name of --alloc none defines is refused now (--alloc-dlopen's wait). */
	if (named_missing_say(p, NAMED_START)) {
		detach_all(tr);
		return 2;
	}
	stopall_resume(tr, p);
	return 0;
}

/*
 * -p: attach, trace until a signal, --duration or the process's exit, then
 * leave it as it was. Returns 0, or 1 when attaching failed or a report could not be written.
 */
static int
run_attached(struct jt_tracer *tr, pid_t pid)
{
	struct jt_proc *p;
	int r;

	/*
	 * Before the first breakpoint goes in: a SIGINT, SIGTERM or SIGHUP that
	 * arrives during the attach then detaches at the loop's first turn. Its
	 * default action would end jmptrace and leave trap bytes in the process.
	 */
	selfsig_catch();
	/* The attach is the stop core's work too (a stop-all, the probes): under the session lock. */
	tthread_lock(&tr->tthreads);
	r = attach_setup(tr, pid, &p);
	tthread_unlock(&tr->tthreads);
	if (r) {
		close_outputs(tr);
		return r;
	}
	/*
	 * Whoever stops us must know that kill -9 is the one way to harm the
	 * process: trap bytes of ours stay in its code. The uprobe source has
	 * none, but for _exit's under --leak-check.
	 */
	if (tr->uprobes && !tr->opt->leak_check)
		error_msg("attached to process %d (%s), %d thread%s; Ctrl-C, SIGTERM or SIGHUP detaches",
			  pid, p->command, p->nthreads, p->nthreads == 1 ? "" : "s");
	else
		error_msg("attached to process %d (%s), %d thread%s; Ctrl-C, SIGTERM or SIGHUP detaches; "
			  "never SIGKILL jmptrace (pid %d): that would kill process %d",
			  pid, p->command, p->nthreads, p->nthreads == 1 ? "" : "s", (int)getpid(), pid);
	tr->show_status = isatty(STDERR_FILENO);
	loop_install_signals();
	loop_run(tr);
	/* The uprobe source's reader still applies samples, under the lock, until close_outputs. */
	tthread_lock(&tr->tthreads);
	if (tr->main_exited)
		snapshot_write(tr, p, "exit");
	else if (!tr->detached)
		detach_all(tr);	/* an internal error: never leave trap bytes behind */
	loop_reports_due(tr);
	tthread_unlock(&tr->tthreads);
	r = named_end(p);
	close_outputs(tr);
	return tr->report_failed ? 1 : r;
}

/* The exit status of jmptrace: the program's own, or 128+signal. */
static int
exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/*
 * An allocation of n bytes failed: jmptrace cannot go on, but the traced
 * processes must. Says whose limit it was (jmptrace's own ulimit, when it
 * has one) and takes the way out, which lets them go and exits 1.
 */
static void
main_oom(size_t n)
{
	static char why[256];
	char num[32], lim[32];
	struct rlimit rl;

	util_num(num, n);
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(why, sizeof(why), "out of memory allocating %s bytes: jmptrace's own address-space limit "
			 "(ulimit -v) is %s KiB", num, util_num(lim, rl.rlim_cur / 1024));
	else if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(why, sizeof(why), "out of memory allocating %s bytes: jmptrace's own data limit "
			 "(ulimit -d) is %s KiB", num, util_num(lim, rl.rlim_cur / 1024));
	else
		snprintf(why, sizeof(why), "out of memory allocating %s bytes", num);
	emerg_exit(0, why);
}

/*
 * jmptrace's end, with status, unless a signal that ends it came: every
 * process was let go by then (loop.c), the last report written; it then
 * ends by that signal, as it would have untraced.
 */
static int
main_end(struct jt_tracer *tr, int status)
{
	int sig = selfsig_fatal();

	(void)tr;
	if (!sig)
		return status;
	error_msg("%s: every traced process was let go untraced; ending by it", selfsig_name(sig));
	util_die_by_signal(sig);
}

/*
 * --source auto, the default: the uprobe source where it can be had (as
 * root: tracefs and the BPF program) and takes its BPF path (Linux 6.6
 * on), for its cost per event is a fraction of a stop's; else ptrace,
 * without a word but under -v. The uprobe source's session is made here,
 * so that the choice is the path that will run.
 */
static void
main_auto_source(struct jt_tracer *tr, struct jt_options *opt)
{
	struct jt_options u = *opt;

	u.source_auto = 0;
	u.source_uprobe = 1;
	cmdline_uprobe_defaults(&u);
	if ((tr->uprobes = uprobes_new(tr, uevent_apply, u.stack_copy, u.buffer_size, u.buffer_total, 1))) {
		*opt = u;
		debug_msg("source: uprobe (--source auto: root, and the kernel makes uprobe_multi links)");
	} else {
		opt->source_auto = 0;
	}
}

int
main(int argc, char **argv)
{
	struct jt_options opt = { 0 };
	struct jt_tracer tr = { 0 };
	struct jt_proc *p;
	char *line;
	const char *why;
	pid_t pid;
	int r;

	/* A subcommand that reads reports and traces nothing. */
	if (argc > 1 && strcmp(argv[1], "diff") == 0)
		return diff_main(argc - 1, argv + 1);
	if ((r = cmdline_parse(argc, argv, &opt)) != 0)
		return r > 0 ? 0 : 2;
	jt_debug = opt.verbose;
	tr.opt = &opt;
	if (opt.source_auto)
		main_auto_source(&tr, &opt);
	tthread_init(&tr.tthreads, &tr, opt.source_uprobe);
	/* From the first breakpoint on, neither a fault nor an exhausted allocator may leave one behind. */
	emerg_init(&tr);
	util_on_oom(main_oom);
	tr.ptrace_options = LAUNCH_PTRACE_OPTIONS;
	if (opt.source_uprobe && !tr.uprobes && uprobes_usable(&why) < 0) {
		error_msg("--source uprobe: %s", why);
		return 2;
	}
	if (open_outputs(&tr, &opt) < 0) {
		close_outputs(&tr);
		return 1;
	}
	if (opt.source_uprobe && !tr.uprobes &&
	    !(tr.uprobes = uprobes_new(&tr, uevent_apply, opt.stack_copy, opt.buffer_size, opt.buffer_total, 0))) {
		close_outputs(&tr);
		return 1;
	}
	if (opt.attach_pid)
		return main_end(&tr, run_attached(&tr, opt.attach_pid));
	if ((pid = launch_program(opt.argv, &tr.launched_script)) < 0) {
		close_outputs(&tr);
		return 1;
	}
	/*
	 * The reader thread only now: glibc's first pthread_create installs its
	 * SIGSETXID handler, which a child forked before would inherit, and an
	 * ignored SIGSETXID would not pass to the program.
	 */
	if (tr.uprobes && uprobes_start(tr.uprobes) < 0) {
		kill(pid, SIGKILL);
		close_outputs(&tr);
		return 1;
	}
	tr.main_pid = pid;
	line = util_argv_line(opt.argv);
	p = proc_new(&tr, pid, line);
	free(line);
	thread_new(&tr, p, pid);
	loop_install_signals();
	r = 1;
	if (loop_run(&tr) == 0 && tr.main_exited) {
		/* The uprobe source's reader still applies samples, under the lock, until close_outputs. */
		tthread_lock(&tr.tthreads);
		snapshot_write(&tr, p, "exit");
		tthread_unlock(&tr.tthreads);
		/* A name of --alloc defined nowhere is a usage error, and outweighs the program's status. */
		r = named_end(p) ? 2 : exit_code(tr.main_status);
	}
	close_outputs(&tr);
	/* A report that could not be written outweighs the program's status, as the manual says. */
	return main_end(&tr, tr.report_failed ? 1 : tr.bad_names ? 2 : r);
}
