/* report.h - writes snapshots of the heap as text and as JSON. */
#ifndef JT_REPORT_H
#define JT_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "alloc.h"

struct jt_heap;
struct jt_sym;
struct jt_supp;
struct jt_stack;
struct leak_result;
struct jt_growth;
struct jt_wrap;

/* What a figure of a stack is, for --sort and --folded-cost (and the formats' cost choice). */
enum report_cost {
	COST_LIVE,		/* live bytes now (the default) */
	COST_PEAK,		/* live bytes at the peak */
	COST_CALLS,		/* allocation calls */
	COST_BYTES,		/* bytes allocated in all */
	COST_TEMPORARY,		/* temporary allocations */
	COST_DEFINITELY_LOST,	/* bytes definitely lost (--leak-check): the snapshot's leak verdict */
};

/* Returns the cost named name ("live", "peak", "calls", "bytes", "temporary"), or -1. */
int report_cost_parse(const char *name);
/* The name of a cost, as report_cost_parse takes it. */
const char *report_cost_name(enum report_cost c);
/* A stack's figure for cost c; 0 for COST_DEFINITELY_LOST, which report_leak_cost (report_leak.h) knows. */
uint64_t report_cost_of(const struct jt_stack *st, enum report_cost c);

/* The sections of the text report (--sections), in the order it writes them. */
enum report_section {
	SECTION_LEAKS,		/* --leak-check's loss records and LEAK SUMMARY */
	SECTION_GROWTH,		/* live bytes per stack over the snapshots (from the second) */
	SECTION_LIVE,
	SECTION_PEAK,
	SECTION_CALLS,
	SECTION_BYTES,
	SECTION_TEMPORARY,
	SECTION_INVALID,	/* invalid frees by stack */
	SECTION_TOTALS,		/* calls per function and the totals */
	SECTION_PAGES,		/* --pages: live pages, their peak and stacks */
	SECTION_COUNT
};
#define REPORT_SECTIONS_ALL ((1u << SECTION_COUNT) - 1)
/* The names --sections takes, comma-separated, in enum report_section's order. */
#define REPORT_SECTION_NAMES "leaks, growth, live, peak, calls, bytes, temporary, invalid, totals, pages"

/* Parses a comma list of section names into 1 << enum report_section bits. Returns 0, or -1 for an unknown or empty name. */
int report_sections_parse(const char *list, unsigned *mask);

/* When a scheduled snapshot (--interval, --duration) was due, and how late it was taken. */
struct jt_due {
	uint64_t due_ms;	/* in time_ms's clock: k * interval, or the duration */
	uint64_t late_ms;	/* how long after due_ms it was taken: its time_ms - due_ms */
	const char *late_why;	/* why, when it counts as late (JT_DUE_LATE_MS); else NULL */
};

/*
 * A snapshot of --interval or --duration more than this after its due time
 * is late: its JSON and a line under -v say so and why. A tenth of the
 * shortest --interval (cmdline.c's JT_MIN_INTERVAL).
 */
#define JT_DUE_LATE_MS 10

/* Everything a snapshot needs; the caller owns all of it. */
struct jt_snapshot {
	const char *reason;	/* "exit", "signal", "sigusr1", "detach", "exec", ... */
	int pid;
	const char *command;	/* its command line, as ps shows it */
	const char *exe;	/* its executable's file, symlinks resolved (/proc/PID/exe), or NULL */
	const char *exe_named;	/* the path it was run by, a symlink's own name kept, or NULL */
	int exited;		/* 1 when the process is gone */
	int exit_status;	/* valid when exited and !killed_by */
	int killed_by;		/* signal number that killed it, or 0 */
	int attached;		/* 1 when we attached to a running process: older blocks are unknown */
	unsigned image_ended;	/* the image an exec ended, that exec's number in the process (from 1); else 0 */
	unsigned execs;		/* the execs of the process traced before this image began: pid and execs name an image */
	unsigned ncalls;	/* entries in call_fns / calls */
	const enum jt_fn *call_fns;	/* the functions whose calls are listed, in report order */
	const uint64_t *calls;		/* traced calls per function, nested calls counted once */
	const struct jt_heap *heap;
	/*
	 * --pages: the program's own anonymous mappings and brk growth, one
	 * region a block (pages.h), on heap's clock and symbolized by sym; NULL
	 * without --pages. A view apart: the heap's figures never count them.
	 */
	const struct jt_heap *pages;
	size_t pages_timeline_from;	/* as timeline_from, for the pages' timeline */
	const uint64_t *pages_calls;	/* the traced calls of mmap, munmap, mremap, sbrk, brk (FN_MMAP..FN_BRK) */
	struct jt_sym *sym;
	unsigned top;		/* how many stacks the main list of the text report lists */
	unsigned top_rest;	/* how many stacks each other section lists; 0 for top's */
	unsigned sections;	/* --sections: 1 << enum report_section per section written; 0 for all */
	enum report_cost sort;	/* --sort: the order of the text report's main list */
	enum report_cost cost;	/* --folded-cost: the figure of folded, flame graph */
	uint64_t min_size, max_size;	/* --min-size/--max-size (0 and UINT64_MAX: no filter) */
	const struct jt_supp *supp;	/* suppressions (report_supp.h), or NULL for none */
	const struct jt_wrap *wrap;	/* the allocator's wrappers (wrap.h, --alloc-fn) a row's name skips, or NULL for the built-in ones */
	unsigned seq;		/* the snapshot's number in this run, from 1 */
	uint64_t time_ms;	/* when it was taken, in the heap's clock (ms since tracing began) */
	const struct jt_due *due;	/* a scheduled snapshot's due time, or NULL */
	unsigned skipped;	/* --interval's snapshots passed over until now: writing one took longer than the interval */
	uint64_t longest_write_ms;	/* the longest a snapshot took to write until now (with skipped) */
	int leak_check;		/* --leak-check was given */
	const struct leak_result *leak;	/* its verdict (leak.h), or NULL when no check could run */
	unsigned show_leak_kinds;	/* --show-leak-kinds: 1 << enum leak_kind per kind the text lists */
	const struct jt_untraced *untraced;	/* traced functions without a breakpoint: calls not counted */
	size_t nuntraced;
	int source_uprobe;	/* --source uprobe: the events came from kernel uprobes */
	uint64_t lost_events;	/* of those, how many the kernel dropped (a full ring buffer) */
	size_t timeline_from;	/* the first timeline sample the JSON lists: those before went into
				   the same file's earlier snapshots of this process */
	uint64_t older_than_ms;	/* --older-than: the live figures count only blocks this old (heap_view_begin), 0 for all */
	const struct jt_growth *growth;	/* the process's live bytes per stack at each snapshot, this one the last (growth.h), or NULL */
};

/* Whether the text report writes section sec: s->sections (--sections) names it, or is 0 for all. */
int report_wants(const struct jt_snapshot *s, enum report_section sec);

/* Writes the human-readable report. Returns 0, or -1 on a write error. */
int report_text(FILE *f, const struct jt_snapshot *s);

/*
 * A JSON report file that stays valid after every snapshot: it holds
 * {"snapshots": [ ... ]} and each report_json_add rewrites the closing "]}".
 */
struct jt_json_out;

/*
 * Opens path by outfile.h's rule (a file is replaced at once by a new
 * one, then grows; a stream gets the closing "]}" only at the close).
 * Returns NULL with errno set on failure.
 */
struct jt_json_out *report_json_open(const char *path);
/* Appends one snapshot with all its stacks (not limited by top). Returns 0, or -1 with errno set. */
int report_json_add(struct jt_json_out *j, const struct jt_snapshot *s);
/* Closes the file. Returns 0, or -1 with errno set when the last writes failed. */
int report_json_close(struct jt_json_out *j);
/* The JSON's "format": 2 since a snapshot lists only the stacks that changed (doc/formats.md). */
#define JSON_FORMAT 2
#define JSON_FORMAT_STR "2"
/* What one file already holds of each process's stacks (report_seen.h); report_json_add keeps its own. */
struct jt_seen;
struct jt_seen *report_json_seen_new(void);
void report_json_seen_free(struct jt_seen *seen);
/*
 * Writes one snapshot as the JSON object report_json_add writes for it,
 * listing the stacks that changed since seen last saw the process's heap,
 * and records them in seen. Returns 0, or -1 on a write error.
 */
int report_json_snapshot(FILE *f, const struct jt_snapshot *s, struct jt_seen *seen);

/*
 * --html: one self-contained page (report_html_page.html) holding every
 * snapshot of the run as the JSON --json writes. A file is replaced whole
 * at every snapshot; a stream gets the page once, at the close.
 */
struct jt_html_out;

/* Takes path by outfile.h's rule (nothing is written yet). Returns NULL with errno set. */
struct jt_html_out *report_html_open(const char *path);
/* Keeps s's JSON and, for a file, rewrites the page with every snapshot so far. Returns 0, or -1 with errno set. */
int report_html_add(struct jt_html_out *h, const struct jt_snapshot *s);
/* Writes a stream's page, then closes and frees h (NULL is fine). Returns 0, or -1 with errno set. */
int report_html_close(struct jt_html_out *h);

/*
 * The file formats. Each writes one snapshot, a whole file's content, to f
 * (outfile.h opens, checks and puts it in place) and returns 0, or -1 when
 * f has a write error (outfile_commit says which).
 */
/* gzip-compressed profile.proto (go tool pprof): alloc_objects, alloc_space, inuse_objects, inuse_space (+ leaked_objects, leaked_space after a leak check). */
int report_pprof(FILE *f, const struct jt_snapshot *s);
/* Folded stacks ("frame;frame;...;frame value", outermost first), s->cost per line. */
int report_folded(FILE *f, const struct jt_snapshot *s);
/* A self-contained interactive SVG flame graph of s->cost. */
int report_flamegraph(FILE *f, const struct jt_snapshot *s);
/* massif.out (ms_print, massif-visualizer), from the timeline, detailed at the peak and now. */
int report_massif(FILE *f, const struct jt_snapshot *s);
/* One CSV row per stack: counters, live and peak figures, the histogram, the frames. */
int report_csv(FILE *f, const struct jt_snapshot *s);
/* A Graphviz call graph of the allocating code: functions with self and total bytes. */
int report_dot(FILE *f, const struct jt_snapshot *s);

#endif
