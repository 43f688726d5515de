/* main.c - command line, setup and exit status of jmptrace; the only place that exits. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "image.h"
#include "launch.h"
#include "loop.h"
#include "proc.h"
#include "report.h"
#include "snapshot.h"
#include "trace.h"
#include "util.h"
#include "worker.h"

#define JT_VERSION "0.1"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: jmptrace [OPTIONS] -- PROGRAM [ARGS...]\n"
		"       jmptrace [OPTIONS] -p PID\n"
		"Traces every allocation and free of a program from outside and reports\n"
		"where its live heap came from, grouped by call stack.\n"
		"\n"
		"  -o FILE          write the text report to FILE instead of stderr\n"
		"      --json FILE  also write every snapshot as JSON to FILE\n"
		"      --top N      stacks listed in the text report (default 10)\n"
		"      --depth N    frames recorded per stack (default 64, at most %d)\n"
		"  -p PID           attach to a running process and all its threads\n"
		"      --duration S with -p: detach by itself after S seconds\n"
		"  -f               follow forked children\n"
		"      --pin        pin each of the program's threads to the CPU of the tracer\n"
		"                   thread that traces it (one tracer thread per CPU). Stops\n"
		"                   then never cross CPUs, on any host, but this CHANGES THE\n"
		"                   PROGRAM'S CPU AFFINITY while it is traced; with -p every\n"
		"                   thread gets its own affinity back at detach. Without\n"
		"                   --pin only jmptrace's threads are moved.\n"
		"  -h, --help       show this help\n"
		"  -V, --version    show the version\n"
		"\n"
		"Signals to jmptrace: SIGUSR1 writes a snapshot and goes on. SIGINT (Ctrl-C)\n"
		"writes a snapshot; a launched program gets its own SIGINT from the terminal,\n"
		"and an attached one (-p) is detached and left running as it was. SIGTERM and\n"
		"SIGHUP detach with -p, and are passed on to a launched program.\n",
		JT_MAX_DEPTH);
}

static int
parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* Returns 0, 1 for --help/--version (exit 0), or -1 for bad usage. */
static int
parse_args(int argc, char **argv, struct jt_options *o)
{
	enum { OPT_JSON = 256, OPT_TOP, OPT_DEPTH, OPT_DURATION, OPT_PIN };
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, OPT_JSON },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "pin", no_argument, NULL, OPT_PIN },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned pid;
	int c;

	o->top = 10;
	o->depth = 64;
	while ((c = getopt_long(argc, argv, "+o:p:fhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->out_path = optarg; break;
		case OPT_JSON: o->json_path = optarg; break;
		case OPT_TOP:
			if (parse_uint(optarg, UINT_MAX, &o->top) < 0)
				goto bad_number;
			break;
		case OPT_DEPTH:
			if (parse_uint(optarg, JT_MAX_DEPTH, &o->depth) < 0 || o->depth == 0)
				goto bad_number;
			break;
		case OPT_DURATION: {
			char *end;
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0))
				goto bad_number;
			break;
		}
		case 'p':
			if (parse_uint(optarg, INT_MAX, &pid) < 0 || pid == 0)
				goto bad_number;
			o->attach_pid = (pid_t)pid;
			break;
		case 'f': o->follow_forks = 1; break;
		case OPT_PIN: o->pin = 1; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("jmptrace %s\n", JT_VERSION); return 1;
		default: usage(stderr); return -1;
		}
	}
	o->argv = argv + optind;
	if (!o->attach_pid == !o->argv[0]) {
		error_msg(o->attach_pid ? "give either -p PID or a program, not both"
					: "no program to run and no -p PID given");
		usage(stderr);
		return -1;
	}
	return 0;
bad_number:
	if (c < 256)
		error_msg("invalid number '%s' for option -%c", optarg, c);
	else
		error_msg("invalid number '%s' for option --%s", optarg, longopts[c - OPT_JSON].name);
	return -1;
}

static int
open_outputs(struct jt_tracer *tr, const struct jt_options *o)
{
	tr->out = stderr;
	if (o->out_path && !(tr->out = fopen(o->out_path, "we"))) {
		perror_msg("cannot open '%s'", o->out_path);
		return -1;
	}
	if (o->json_path && !(tr->json = report_json_open(o->json_path))) {
		perror_msg("cannot open '%s'", o->json_path);
		return -1;
	}
	return 0;
}

/* Closes the reports and frees every table, so that leak checkers see a clean exit. */
static void
close_outputs(struct jt_tracer *tr)
{
	if (tr->json)
		report_json_close(tr->json);
	if (tr->out && tr->out != stderr)
		fclose(tr->out);
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		while (tr->threads[i])
			thread_free(tr, tr->threads[i]);
	while (tr->procs)
		proc_free(tr, tr->procs);
}

/*
 * -p: attach, trace until a signal, --duration or the process's exit, then
 * leave it as it was. Exits 0 unless attaching failed.
 */
static int
run_attached(struct jt_tracer *tr, pid_t pid)
{
	struct jt_proc *p;

	if (attach_process(tr, pid, &p) < 0) {
		close_outputs(tr);
		return 1;
	}
	tr->main_pid = pid;
	if (image_setup(p) < 0) {
		trace_detach(tr, p);
		close_outputs(tr);
		return 1;
	}
	trace_resume_all(tr, p);
	tr->image_seen = 1;
	tr->show_status = isatty(STDERR_FILENO);
	loop_install_signals();
	loop_run(tr);
	if (tr->main_exited)
		snapshot_write(tr, p, "exit");
	else if (!tr->detached)
		trace_detach(tr, p);	/* an internal error: never leave trap bytes behind */
	close_outputs(tr);
	return 0;
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

int
main(int argc, char **argv)
{
	struct jt_options opt = { 0 };
	struct jt_tracer tr = { 0 };
	struct jt_proc *p;
	pid_t pid;
	int r;

	jt_debug = getenv("JMPTRACE_DEBUG") != NULL;
	if ((r = parse_args(argc, argv, &opt)) != 0)
		return r > 0 ? 0 : 2;
	/* For tests and measurements: the slow path that emulation normally avoids. */
	opt.no_emulate = getenv("JMPTRACE_NO_EMULATE") != NULL;
	tr.opt = &opt;
	worker_init(&tr);
	tr.ptrace_options = LAUNCH_PTRACE_OPTIONS;
	tr.no_cpu_follow = getenv("JMPTRACE_NO_CPU_FOLLOW") != NULL;
	if (open_outputs(&tr, &opt) < 0) {
		close_outputs(&tr);
		return 1;
	}
	if (opt.attach_pid) {
		signal(SIGPIPE, SIG_IGN);
		return run_attached(&tr, opt.attach_pid);
	}
	if ((pid = launch_program(opt.argv)) < 0) {
		close_outputs(&tr);
		return 1;
	}
	/* Only now: an ignored SIGPIPE would be inherited by the program across exec. */
	signal(SIGPIPE, SIG_IGN);
	tr.main_pid = pid;
	p = proc_new(&tr, pid, opt.argv[0]);
	thread_new(&tr, p, pid);
	loop_install_signals();
	r = 1;
	if (loop_run(&tr) == 0 && tr.main_exited) {
		snapshot_write(&tr, p, "exit");
		r = exit_code(tr.main_status);
	}
	close_outputs(&tr);
	return r;
}
