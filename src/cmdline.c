/* cmdline.c - jmptrace's command line: the --help text, each option's value checked, and the options checked together. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cmdline.h"
#include "cmdline_int.h"
#include "leak.h"
#include "report.h"
#include "tthread.h"
#include "unwind.h"
#include "uprobes.h"
#include "util.h"
#include "wrap.h"

#define JT_VERSION "0.1"

static int
parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -1;	/* strtoul would take a sign or leading blanks */
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/*
 * --duration's bounds. loop.c counts it in whole milliseconds in a uint64_t:
 * below a millisecond it would be 0 and detach at once, and inf, nan or 1e18
 * seconds do not fit (the conversion is undefined; it came out as 0). A year
 * is far longer than anyone traces a process and far inside what fits; to
 * trace without a limit, leave --duration out.
 */
#define JT_MIN_DURATION 0.001
#define JT_MAX_DURATION 31536000	/* 365 days, in seconds */

/* Parses seconds for --duration: a finite decimal number within the bounds above. */
static int
parse_duration(const char *s, double *out)
{
	char *end;
	double v;

	/* A decimal number only: strtod also takes "inf", "nan", hex and leading blanks. */
	if ((!isdigit((unsigned char)*s) && *s != '.') || s[strspn(s, "0123456789.eE+-")])
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < JT_MIN_DURATION || v > JT_MAX_DURATION)
		return -1;
	*out = v;
	return 0;
}

/* Parses a byte count for --min-size/--max-size: digits, then k, m or g in either case (powers of 1024). */
static int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* --interval's bounds: a snapshot is too slow to take more than 10 times a second. */
#define JT_MIN_INTERVAL 0.1
/* --older-than's highest: the heap's block ages are exact up to 49 days (heap.c). */
#define JT_MAX_OLDER_THAN 4000000

enum {
	OPT_JSON = 256, OPT_TOP, OPT_DEPTH, OPT_DURATION,
	OPT_TRACER_THREADS, OPT_UNWINDER, OPT_NO_CPU_FOLLOW, OPT_NO_EMULATE, OPT_PIN,
	OPT_SORT, OPT_MIN_SIZE, OPT_MAX_SIZE, OPT_PPROF, OPT_FOLDED, OPT_FOLDED_COST,
	OPT_FLAMEGRAPH, OPT_MASSIF, OPT_CSV, OPT_DOT, OPT_INTERVAL, OPT_SUPPRESSIONS,
	OPT_NO_DEFAULT_SUPPRESSIONS, OPT_LEAK_CHECK, OPT_LEAK_HEURISTICS, OPT_SHOW_LEAK_KINDS,
	OPT_SOURCE, OPT_STACK_COPY, OPT_BUFFER_SIZE, OPT_BUFFER_TOTAL, OPT_OLDER_THAN,
	OPT_FULL_NAMES, OPT_HTML, OPT_SECTIONS, OPT_SHOW_RUNTIME,
	OPT_ALLOC, OPT_ALLOC_DLOPEN, OPT_ALLOC_PRESET, OPT_PAGES, OPT_ALLOC_FN,
};

static const struct option longopts[] = {
	{ "json", required_argument, NULL, OPT_JSON },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "tracer-threads", required_argument, NULL, OPT_TRACER_THREADS },
	{ "unwinder", required_argument, NULL, OPT_UNWINDER },
	{ "no-cpu-follow", no_argument, NULL, OPT_NO_CPU_FOLLOW },
	{ "no-emulate", no_argument, NULL, OPT_NO_EMULATE },
	{ "pin", no_argument, NULL, OPT_PIN },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "folded-cost", required_argument, NULL, OPT_FOLDED_COST },
	{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
	{ "massif", required_argument, NULL, OPT_MASSIF },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "dot", required_argument, NULL, OPT_DOT },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "older-than", required_argument, NULL, OPT_OLDER_THAN },
	{ "suppressions", required_argument, NULL, OPT_SUPPRESSIONS },
	{ "no-default-suppressions", no_argument, NULL, OPT_NO_DEFAULT_SUPPRESSIONS },
	{ "leak-check", no_argument, NULL, OPT_LEAK_CHECK },
	{ "pages", no_argument, NULL, OPT_PAGES },
	{ "leak-heuristics", required_argument, NULL, OPT_LEAK_HEURISTICS },
	{ "show-leak-kinds", required_argument, NULL, OPT_SHOW_LEAK_KINDS },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "stack-copy", required_argument, NULL, OPT_STACK_COPY },
	{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
	{ "buffer-total", required_argument, NULL, OPT_BUFFER_TOTAL },
	{ "full-names", no_argument, NULL, OPT_FULL_NAMES },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "sections", required_argument, NULL, OPT_SECTIONS },
	{ "show-runtime", no_argument, NULL, OPT_SHOW_RUNTIME },
	{ "alloc", required_argument, NULL, OPT_ALLOC },
	{ "alloc-dlopen", required_argument, NULL, OPT_ALLOC_DLOPEN },
	{ "alloc-preset", required_argument, NULL, OPT_ALLOC_PRESET },
	{ "alloc-fn", required_argument, NULL, OPT_ALLOC_FN },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* Says in one line that arg is not a valid value for option c, and what is. */
static int
bad_value(int c, const char *arg, const char *want)
{
	if (c < 256) {
		error_msg("invalid value '%s' for option -%c: %s", arg, c, want);
		return -1;
	}
	for (const struct option *lo = longopts; lo->name; lo++)
		if (lo->val == c)
			error_msg("invalid value '%s' for option --%s: %s", arg, lo->name, want);
	return -1;
}

/* Stores one option's value in o. Returns 0, 1 for --help/--version, or -1 after saying why. */
static int
parse_one(int c, const char *arg, struct jt_options *o)
{
	unsigned pid;
	uint64_t size;
	char why[200];
	int r;

	switch (c) {
	case 'o': o->out_path = arg; return 0;
	case OPT_JSON: o->json_path = arg; return 0;
	case OPT_TOP:
		o->top_rest = UINT_MAX;	/* then o->top */
		return parse_uint(arg, UINT_MAX, &o->top) < 0 ? bad_value(c, arg, "give a number") : 0;
	case OPT_SECTIONS:
		return report_sections_parse(arg, &o->sections) < 0
			? bad_value(c, arg, "give a comma list of " REPORT_SECTION_NAMES) : 0;
	case OPT_SHOW_RUNTIME: o->show_runtime = 1; return 0;
	case OPT_DEPTH:
		if (parse_uint(arg, JT_MAX_DEPTH, &o->depth) < 0 || o->depth == 0)
			return bad_value(c, arg, "give a number from 1 to " JT_STR(JT_MAX_DEPTH));
		return 0;
	case OPT_DURATION:
		return parse_duration(arg, &o->duration) < 0
			? bad_value(c, arg, "give seconds, from 0.001 to " JT_STR(JT_MAX_DURATION)) : 0;
	case OPT_TRACER_THREADS:
		if (parse_uint(arg, JT_MAX_TTHREADS, &o->tracer_threads) < 0 || o->tracer_threads == 0)
			return bad_value(c, arg, "give a number from 1 to " JT_STR(JT_MAX_TTHREADS));
		return 0;
	case OPT_UNWINDER:
		if (!*arg || !unwind_backend_known(arg))
			return bad_value(c, arg, "give dw or libunwind");
		o->unwinder = arg;
		return 0;
	case OPT_NO_CPU_FOLLOW: o->no_cpu_follow = 1; return 0;
	case OPT_NO_EMULATE: o->no_emulate = 1; return 0;
	case OPT_PIN: o->pin = 1; return 0;
	case OPT_SORT:
	case OPT_FOLDED_COST:
		if ((r = report_cost_parse(arg)) < 0)
			return bad_value(c, arg, "give live, peak, calls, bytes, temporary or definitely-lost");
		*(c == OPT_SORT ? &o->sort : &o->cost) = r;
		return 0;
	case OPT_MIN_SIZE:
		return parse_size(arg, &o->min_size) < 0 ? bad_value(c, arg, "give bytes, e.g. 64 or 4k") : 0;
	case OPT_MAX_SIZE:
		/* 0 would keep only empty allocations; inside, it means no maximum. */
		if (parse_size(arg, &o->max_size) < 0 || o->max_size == 0)
			return bad_value(c, arg, "give bytes, at least 1, e.g. 64 or 4k");
		return 0;
	case OPT_PPROF: o->pprof_path = arg; return 0;
	case OPT_FOLDED: o->folded_path = arg; return 0;
	case OPT_FLAMEGRAPH: o->flame_path = arg; return 0;
	case OPT_MASSIF: o->massif_path = arg; return 0;
	case OPT_CSV: o->csv_path = arg; return 0;
	case OPT_DOT: o->dot_path = arg; return 0;
	case OPT_HTML: o->html_path = arg; return 0;
	case OPT_INTERVAL:
		if (parse_duration(arg, &o->interval) < 0 || o->interval < JT_MIN_INTERVAL)
			return bad_value(c, arg, "give seconds, from 0.1 to " JT_STR(JT_MAX_DURATION));
		return 0;
	case OPT_OLDER_THAN:
		if (parse_duration(arg, &o->older_than) < 0 || o->older_than > JT_MAX_OLDER_THAN)
			return bad_value(c, arg, "give seconds, from 0.001 to " JT_STR(JT_MAX_OLDER_THAN));
		return 0;
	case OPT_SUPPRESSIONS: o->supp_path = arg; return 0;
	case OPT_NO_DEFAULT_SUPPRESSIONS: o->no_default_supp = 1; return 0;
	case OPT_FULL_NAMES: o->full_names = 1; return 0;
	case OPT_LEAK_CHECK: o->leak_check = 1; return 0;
	case OPT_PAGES: o->pages = 1; return 0;
	case OPT_LEAK_HEURISTICS:
		if ((r = leak_heur_parse(arg)) < 0)
			return bad_value(c, arg, "give stdstring, length64, newarray, multipleinheritance "
					 "(comma-separated), all or none");
		o->leak_heuristics = (unsigned)r;
		return 0;
	case OPT_SHOW_LEAK_KINDS:
		if ((r = leak_kinds_parse(arg)) < 0)
			return bad_value(c, arg, "give definite, indirect, possible, reachable "
					 "(comma-separated), all or none");
		o->show_leak_kinds = (unsigned)r;
		return 0;
	case OPT_SOURCE:
		if (strcmp(arg, "auto") && strcmp(arg, "ptrace") && strcmp(arg, "uprobe"))
			return bad_value(c, arg, "give auto, ptrace or uprobe");
		o->source_auto = strcmp(arg, "auto") == 0;
		o->source_uprobe = strcmp(arg, "uprobe") == 0;
		return 0;
	case OPT_STACK_COPY:
		/* The kernel takes at most a u16's worth, in whole words. */
		if (parse_size(arg, &size) < 0 || size < 64 || size > 65528)
			return bad_value(c, arg, "give bytes from 64 to 65528, e.g. 16k");
		o->stack_copy = (uint32_t)(size & ~(uint64_t)7);
		return 0;
	case OPT_BUFFER_SIZE:
		if (parse_size(arg, &size) < 0 || size < 65536 || size > ((uint64_t)1 << 32))
			return bad_value(c, arg, "give bytes from 64k to 4g, e.g. 64m");
		o->buffer_size = size;
		return 0;
	case OPT_BUFFER_TOTAL:
		if (parse_size(arg, &size) < 0 || size < UPROBES_RING_MIN || size > ((uint64_t)1 << 40))
			return bad_value(c, arg, "give bytes from 512k to 1t, e.g. 2g");
		o->buffer_total = size;
		return 0;
	case OPT_ALLOC: case OPT_ALLOC_DLOPEN:
		return alloc_named_add(arg, c == OPT_ALLOC_DLOPEN, why, sizeof(why)) < 0 ? bad_value(c, arg, why) : 0;
	case OPT_ALLOC_PRESET:
		return alloc_preset_add(arg) < 0 ? bad_value(c, arg, "give " ALLOC_PRESET_NAMES) : 0;
	case OPT_ALLOC_FN:
		if (wrap_add(NULL, arg, why, sizeof(why)) < 0)
			return bad_value(c, arg, why);
		if (o->nalloc_fn == JT_MAX_ALLOC_FN)
			return bad_value(c, arg, "at most " JT_STR(JT_MAX_ALLOC_FN) " patterns: join some with * or [...]");
		o->alloc_fn[o->nalloc_fn++] = arg;
		return 0;
	case 'v': o->verbose = 1; return 0;
	case 'p':
		if (parse_uint(arg, INT_MAX, &pid) < 0 || pid == 0)
			return bad_value(c, arg, "give a process id");
		o->attach_pid = (pid_t)pid;
		return 0;
	case 'f': o->follow_forks = 1; return 0;
	case 'h': cmdline_usage(stdout); return 1;
	case 'V': printf("jmptrace %s\n", JT_VERSION); return 1;
	default: try_help_msg("jmptrace"); return -1;	/* getopt said what is wrong */
	}
}

void
cmdline_uprobe_defaults(struct jt_options *o)
{
	/* One reader of the rings; the ptrace side sees only rare stops, which one tracer thread keeps up with. */
	o->tracer_threads = 1;
	/*
	 * Following the tracee's CPU, and SCHED_IDLE while a CPU is
	 * spare, make a stop's round trip short when stops are all
	 * there is. Here a stop is rare and its work long (a new
	 * thread's events): idle-class and bound to one CPU among the
	 * program's busy threads, the tracer thread made the stopped
	 * thread wait 30-400 ms for it (uprobes_start).
	 */
	o->no_cpu_follow = 1;
	o->buffer_size = util_pow2_pages(o->buffer_size ? o->buffer_size : (uint64_t)32 << 20);
	/*
	 * The kernel keeps a ring's pages from its mmap on: a sixteenth
	 * of the memory (48 rings of 32 MiB on 24 GiB), but never fewer
	 * than 16 full rings, so that a small machine still gives a
	 * program of a few busy threads the rings it had before.
	 */
	if (!o->buffer_total) {
		o->buffer_total = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 16;
		if (o->buffer_total < 16 * o->buffer_size)
			o->buffer_total = 16 * o->buffer_size;
	}
}

int
cmdline_parse(int argc, char **argv, struct jt_options *o)
{
	int c, r;

	o->top = 10;
	o->top_rest = 3;
	o->depth = 64;
	o->source_auto = 1;
	o->leak_heuristics = LEAK_HEUR_ALL;
	o->show_leak_kinds = 1u << LEAK_DEFINITE | 1u << LEAK_POSSIBLE;
	/* getopt's messages begin with argv[0]: "jmptrace:", not the path it was run by. */
	argv[0] = "jmptrace";
	while ((c = getopt_long(argc, argv, "+o:p:fhvV", longopts, NULL)) != -1)
		if ((r = parse_one(c, optarg, o)) != 0)
			return r;
	o->argv = argv + optind;
	if (o->source_auto && (o->stack_copy || o->buffer_size || o->buffer_total)) {
		/* Options of the uprobe source alone ask for it: an error where it cannot be had. */
		o->source_auto = 0;
		o->source_uprobe = 1;
	} else if (o->source_auto && (o->tracer_threads || o->pin || o->no_emulate)) {
		/* And those of the ptrace source for that one. */
		o->source_auto = 0;
	}
	if (o->max_size && o->min_size > o->max_size) {
		error_msg("--min-size %" PRIu64 " is above --max-size %" PRIu64 ": no allocation would be broken down",
			  o->min_size, o->max_size);
		return -1;
	}
	if ((o->sort == COST_DEFINITELY_LOST || o->cost == COST_DEFINITELY_LOST) && !o->leak_check) {
		error_msg("the cost definitely-lost needs --leak-check");
		return -1;
	}
	if (o->leak_check) {
		/* Only tracer thread 0 stops a whole process; the check at _exit must be its. */
		if (o->tracer_threads > 1) {
			error_msg("--leak-check traces with one tracer thread: leave out --tracer-threads %u",
				  o->tracer_threads);
			return -1;
		}
		o->tracer_threads = 1;
	}
	if ((o->stack_copy || o->buffer_size || o->buffer_total) && !o->source_uprobe) {
		error_msg("--stack-copy, --buffer-size and --buffer-total need --source uprobe");
		return -1;
	}
	if (o->source_uprobe)
		cmdline_uprobe_defaults(o);
	if (o->duration > 0 && !o->attach_pid) {
		/* A launched program is traced to its end: that is when its report is written. */
		error_msg("--duration needs -p PID: a launched program is traced until it exits");
		return -1;
	}
	if (!o->attach_pid == !o->argv[0]) {
		error_msg(o->attach_pid ? "give either -p PID or a program, not both"
					: "no program to run and no -p PID given");
		try_help_msg("jmptrace");
		return -1;
	}
	return 0;
}
