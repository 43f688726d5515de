/* options.h - the options a user chose on the command line (cmdline.c parses them). */
#ifndef JT_OPTIONS_H
#define JT_OPTIONS_H

#include <stdint.h>
#include <sys/types.h>

/* The deepest stack a record keeps (--depth's limit). */
#define JT_MAX_DEPTH 256
/* How many --alloc-fn patterns a command line may give. */
#define JT_MAX_ALLOC_FN 64

/* Options from the command line. */
struct jt_options {
	const char *out_path;		/* -o */
	const char *json_path;		/* --json */
	unsigned top;			/* --top */
	unsigned top_rest;		/* the text report's other sections' top: --top's (UINT_MAX) or 3 */
	unsigned sections;		/* --sections: 1 << enum report_section each; 0 for all */
	int show_runtime;		/* --show-runtime: no runtime rules (supp_add_runtime) */
	unsigned depth;			/* --depth */
	pid_t attach_pid;		/* -p */
	int follow_forks;		/* -f */
	double duration;		/* --duration */
	unsigned tracer_threads;	/* --tracer-threads: 1..JT_MAX_TTHREADS, 0 for one per CPU */
	const char *unwinder;		/* --unwinder: a backend name unwind_backend_known accepts */
	int no_cpu_follow;		/* --no-cpu-follow: leave scheduling alone (for measurements) */
	int no_emulate;			/* --no-emulate: step over every displaced instruction */
	int source_uprobe;		/* --source uprobe: allocator events from kernel uprobes (uprobes.h) */
	int source_auto;		/* --source auto, the default: main.c chooses (main_auto_source) */
	uint32_t stack_copy;		/* --stack-copy: bytes of user stack each uprobe sample copies */
	uint64_t buffer_size;		/* --buffer-size: bytes of ring buffer per thread */
	uint64_t buffer_total;		/* --buffer-total: bytes of the rings of all threads together */
	int verbose;			/* -v: a debug line per decision on stderr */
	int pin;			/* --pin: pin the program's threads to their tracer thread's CPU */
	int sort;			/* --sort: enum report_cost */
	int cost;			/* --folded-cost: enum report_cost */
	uint64_t min_size, max_size;	/* --min-size, --max-size (0 when not given: no bound) */
	const char *pprof_path;		/* --pprof */
	const char *folded_path;	/* --folded */
	const char *flame_path;		/* --flamegraph */
	const char *massif_path;	/* --massif */
	const char *csv_path;		/* --csv */
	const char *dot_path;		/* --dot */
	const char *html_path;		/* --html */
	double interval;		/* --interval: seconds between snapshots, 0 for none */
	double older_than;		/* --older-than: seconds a block must be old to count as live, 0 for none */
	const char *supp_path;		/* --suppressions */
	int no_default_supp;		/* --no-default-suppressions */
	int full_names;			/* --full-names: C++ functions named in full, not short (cxxname.h) */
	int leak_check;			/* --leak-check */
	int pages;			/* --pages: mmap/munmap/mremap/sbrk/brk made outside the allocator, by stack */
	unsigned leak_heuristics;	/* --leak-heuristics: enum leak_heuristic bits */
	unsigned show_leak_kinds;	/* --show-leak-kinds: 1 << enum leak_kind per kind listed */
	const char *alloc_fn[JT_MAX_ALLOC_FN];	/* --alloc-fn: wrapper patterns (wrap.h), nalloc_fn of them, checked */
	unsigned nalloc_fn;
	char **argv;			/* program and arguments in launch mode */
};

#endif
