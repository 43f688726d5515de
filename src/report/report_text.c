/* report_text.c - the heap report for people, valgrind style. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testfault.h"
#include "growth.h"
#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "report_leak.h"
#include "report_lists.h"
#include "supp.h"
#include "sym.h"
#include "util.h"

/* Describes how the process stands: "exited with status 0", "killed by SIGSEGV", ... */
static void
text_status(FILE *f, const struct jt_snapshot *s)
{
	char sig[32];

	if (!s->exited && s->image_ended)
		fprintf(f, "process:  still running, as another program: this image ended at its exec %u\n",
			s->image_ended);
	else if (!s->exited)
		fprintf(f, "process:  still running\n");
	else if (s->killed_by)
		fprintf(f, "process:  killed by %s\n", report_signame(s->killed_by, sig, sizeof(sig)));
	else
		fprintf(f, "process:  exited with status %d\n", s->exit_status);
}

static void
text_header(FILE *f, const struct jt_snapshot *s)
{
	char num[32];

	fprintf(f, "==== jmptrace heap report ====\n");
	fprintf(f, "command:  %s\n", s->command ? s->command : "(unknown)");
	fprintf(f, "exe:      %s\n", s->exe ? s->exe : "(unknown)");
	fprintf(f, "pid:      %d\n", s->pid);
	/* Which source counted the events (--source auto chooses one): the figures' provenance. */
	fprintf(f, "source:   %s\n", s->source_uprobe ? "uprobe" : "ptrace");
	fprintf(f, "snapshot: %s\n", s->reason ? s->reason : "(unknown)");
	text_status(f, s);
	if (s->skipped) {
		char a[32];

		fprintf(f, "interval: %u %s passed over until now: writing one took up to %s ms, longer than\n"
			"          --interval allows, so each came after the program ran as long again\n",
			s->skipped, report_plural(s->skipped, "snapshot", "snapshots"), util_num(a, s->longest_write_ms));
	}
	if (s->older_than_ms)
		fprintf(f, "age:      only the blocks allocated at least %s ms before this snapshot\n"
			"          count as live (--older-than); the peak and the timeline count all\n",
			util_num(num, s->older_than_ms));
	if (s->attached) {
		fprintf(f, "note:     jmptrace attached to a running process, so blocks allocated\n"
			"          before the attach are unknown: they are not counted as live, and\n"
			"          frees of them are counted as unknown frees.\n");
	}
}

/* Widest label that will be printed in calls: and totals:, so the figures line up. */
static int
text_name_width(const struct jt_snapshot *s)
{
	int w = (int)strlen("temporary allocations");
	unsigned i;

	for (i = 0; i < s->ncalls; i++)
		if (s->calls[i] && (int)strlen(alloc_fns[s->call_fns[i]].name) > w)
			w = (int)strlen(alloc_fns[s->call_fns[i]].name);
	return w;
}

/* Temporary allocations of every stack, the filtered one's too: a total of the whole run. */
static uint64_t
text_temporary(const struct jt_heap *h)
{
	uint32_t id, n = heap_stack_count(h);
	uint64_t sum = 0;

	for (id = 0; id < n; id++)
		sum += heap_stack_get(h, id)->temporary;
	return sum;
}

/*
 * With --min-size/--max-size, what was outside the range: counted in the
 * totals, but under one pseudo stack (heap_filtered_stack) with no frames.
 */
static void
text_filtered(FILE *f, const struct jt_snapshot *s)
{
	const struct jt_stack *st = NULL;
	uint32_t id, n = heap_stack_count(s->heap);
	char a[32], b[32], c[32], d[32], range[96];
	/* No maximum is UINT64_MAX, or 0 as in jt_options (a zeroed snapshot filters nothing). */
	int no_max = s->max_size == 0 || s->max_size == UINT64_MAX;

	if (s->min_size == 0 && no_max)
		return;
	for (id = 0; id < n && !st; id++)
		if (heap_stack_get(s->heap, id)->filtered)
			st = heap_stack_get(s->heap, id);
	if (no_max)
		snprintf(range, sizeof(range), "sizes under %s bytes", util_num(a, s->min_size));
	else if (s->min_size == 0)
		snprintf(range, sizeof(range), "sizes over %s bytes", util_num(a, s->max_size));
	else
		snprintf(range, sizeof(range), "sizes outside %s..%s bytes", util_num(a, s->min_size),
			 util_num(b, s->max_size));
	fprintf(f, "  %s: %s allocation %s of %s bytes, %s bytes in %s %s live, not broken down by stack\n",
		range, util_num(a, st ? st->alloc_calls : 0),
		report_plural(st ? st->alloc_calls : 0, "call", "calls"),
		util_num(b, st ? st->alloc_bytes : 0), util_num(c, st ? st->live_bytes : 0),
		util_num(d, st ? st->live_blocks : 0),
		report_plural(st ? st->live_blocks : 0, "block", "blocks"));
}

/* Every traced function that has no breakpoint: the figures above lack its calls. */
static void
text_untraced(FILE *f, const struct jt_snapshot *s)
{
	for (size_t i = 0; i < s->nuntraced; i++) {
		const char *slash = strrchr(s->untraced[i].module, '/');
		char ms[32];

		if (s->untraced[i].missed_until_ms)
			fprintf(f, "PARTLY TRACED: %s (%s): %s; its calls until %s ms may be missing, later ones are counted\n",
				alloc_fns[s->untraced[i].fn].name, slash ? slash + 1 : s->untraced[i].module,
				s->untraced[i].reason, util_num(ms, s->untraced[i].missed_until_ms));
		else
			fprintf(f, "NOT TRACED: %s (%s): %s; its calls are not counted\n", alloc_fns[s->untraced[i].fn].name,
				slash ? slash + 1 : s->untraced[i].module, s->untraced[i].reason);
	}
}

/* Once per module the frames above fell in that had no debug information at all. */
static void
text_nodebug(FILE *f, const struct jt_snapshot *s)
{
	size_t n = 0;
	/* A snapshot without frames to name (a unit test's) has no symbolizer. */
	const char *const *mods = s->sym ? sym_nodebug_modules(s->sym, &n) : NULL;

	for (size_t i = 0; i < n; i++)
		fprintf(f, "NO DEBUG INFO: %s: its frames have no file:line (no debug file was found, on disk or from"
			" a debuginfod server: DEBUGINFOD_URLS)\n", mods[i]);
	if (n)
		fputc('\n', f);
}

static void
text_totals(FILE *f, const struct jt_snapshot *s, const struct jt_heap_totals *t)
{
	char a[32], b[32];
	int w = text_name_width(s);
	unsigned i;

	fprintf(f, "calls:\n");
	for (i = 0; i < s->ncalls; i++)
		if (s->calls[i])
			fprintf(f, "  %-*s %15s\n", w, alloc_fns[s->call_fns[i]].name, util_num(a, s->calls[i]));
	fprintf(f, "totals:\n");
	fprintf(f, "  %-*s %15s\n", w, "allocation calls", util_num(a, report_alloc_calls(s)));
	fprintf(f, "  %-*s %15s\n", w, "bytes allocated", util_num(a, t->bytes_allocated));
	fprintf(f, "  %-*s %15s\n", w, "frees", util_num(a, t->frees));
	fprintf(f, "  %-*s %15s\n", w, "unknown frees", util_num(a, t->unknown_frees));
	fprintf(f, "  %-*s %15s\n", w, "temporary allocations", util_num(a, text_temporary(s->heap)));
	fprintf(f, "  %-*s %15s bytes in %s %s\n", w, "live", util_num(a, t->live_bytes),
		util_num(b, t->live_blocks), report_plural(t->live_blocks, "block", "blocks"));
	fprintf(f, "  %-*s %15s bytes\n", w, "peak live", util_num(a, t->peak_live_bytes));
	if (s->source_uprobe)
		fprintf(f, "  %-*s %15s%s\n", w, "lost events", util_num(a, s->lost_events),
			s->lost_events ? "  (the kernel's ring buffers overflowed: every figure above may be short "
					 "of them, live ones may hold blocks freed unseen; see --buffer-size)" : "");
	text_filtered(f, s);
	text_untraced(f, s);
	fputc('\n', f);
}

/* "N bytes in M regions" (thousands separated) into buf; returns buf. */
static const char *
text_regions(char *buf, size_t len, uint64_t bytes, uint64_t regions)
{
	char a[32], b[32];

	snprintf(buf, len, "%s bytes in %s %s", util_num(a, bytes), util_num(b, regions),
		 report_plural(regions, "region", "regions"));
	return buf;
}

/*
 * --pages: the program's own mappings, a view apart from the heap's: the
 * live and peak figures, then the stacks with live pages, most first, as
 * the live list lists blocks:
 *   #1: 4,194,304 bytes in 4 regions live; peak 5,242,880 bytes in 5 regions; 5 mappings from this stack
 */
static void
text_pages(FILE *f, const struct jt_snapshot *s, unsigned top)
{
	struct jt_heap_totals t;
	struct jt_heap_peak pk;
	uint32_t n, i, *ids = report_rank(s->pages, HEAP_RANK_LIVE, &n);
	uint32_t shown = n < top ? n : top;
	char a[96], b[96], c[32];

	heap_totals(s->pages, &t);
	heap_peak(s->pages, &pk);
	fprintf(f, "pages (--pages): anonymous private mappings and brk growth the program made outside malloc;\n"
		"the heap figures count malloc's blocks (its own mmap and sbrk too), never these\n");
	fprintf(f, "  pages live  %s\n", text_regions(a, sizeof(a), t.live_bytes, t.live_blocks));
	fprintf(f, "  pages peak  %s at %s ms\n", text_regions(b, sizeof(b), pk.live_bytes, pk.live_blocks),
		util_num(c, pk.time_ms));
	if (n)
		fprintf(f, "top %u of %s %s by live pages:\n", shown, util_num(c, n), report_plural(n, "stack", "stacks"));
	fputc('\n', f);
	for (i = 0; i < shown; i++) {
		const struct jt_stack *st = heap_stack_get(s->pages, ids[i]);

		fprintf(f, "#%u: %s live; peak %s; %s %s from this stack\n", i + 1,
			text_regions(a, sizeof(a), st->live_bytes, st->live_blocks),
			text_regions(b, sizeof(b), st->peak_bytes, st->peak_blocks), util_num(c, st->alloc_calls),
			report_plural(st->alloc_calls, "mapping", "mappings"));
		report_text_frames(f, s->sym, st);
	}
	free(ids);
}

/*
 * Every invalid free, grouped by the stack that made it, as memcheck lists
 * "Invalid free()": the free's caller first. Nothing when there is none.
 */
static void
text_invalid_frees(FILE *f, const struct jt_snapshot *s, const struct jt_heap_totals *t)
{
	uint32_t *ids, n, i;
	char a[32], b[32], c[32], d[32];

	ids = report_rank(s->heap, HEAP_RANK_INVALID, &n);
	if (n && !t->inside_frees)
		fprintf(f, "%s invalid %s (of addresses that were no live block: double frees, "
			"frees of non-heap pointers) from %s %s:\n\n",
			util_num(a, t->invalid_frees), report_plural(t->invalid_frees, "free", "frees"),
			util_num(b, n), report_plural(n, "stack", "stacks"));
	else if (n && t->inside_frees == t->invalid_frees)
		fprintf(f, "%s invalid %s (of pointers inside a live block, past its start) from %s %s:\n\n",
			util_num(a, t->invalid_frees), report_plural(t->invalid_frees, "free", "frees"),
			util_num(b, n), report_plural(n, "stack", "stacks"));
	else if (n)
		/* A pointer inside a live block is no double free: its block is still there. */
		fprintf(f, "%s invalid %s from %s %s: %s of a pointer inside a live block, %s of addresses "
			"that were no live block (double frees, frees of non-heap pointers):\n\n",
			util_num(a, t->invalid_frees), report_plural(t->invalid_frees, "free", "frees"),
			util_num(b, n), report_plural(n, "stack", "stacks"), util_num(c, t->inside_frees),
			util_num(d, t->invalid_frees - t->inside_frees));
	for (i = 0; i < n; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, ids[i]);

		fprintf(f, "Invalid free #%u: %s %s from this stack", i + 1,
			util_num(a, st->invalid_frees), report_plural(st->invalid_frees, "call", "calls"));
		if (st->inside_frees == st->invalid_frees)
			fputs(", of a pointer inside a live block", f);
		else if (st->inside_frees)
			fprintf(f, ", %s of a pointer inside a live block", util_num(b, st->inside_frees));
		fputc('\n', f);
		report_text_frames(f, s->sym, st);
	}
	free(ids);
}

/* Stack id's live bytes at each snapshot: all of them, or the first two and the last two when there are more than six. */
static void
text_growth_series(FILE *f, const struct jt_growth *g, uint32_t id)
{
	unsigned k, n = growth_count(g);
	char a[32];

	/* A long run keeps some of its snapshots only (GROWTH_POINTS_MAX), spread over it. */
	if (n == growth_snapshots(g))
		fprintf(f, "    live bytes at each snapshot:");
	else
		fprintf(f, "    live bytes at %u of the snapshots, spread over the run:", n);
	for (k = 0; k < n; k++) {
		/* Many snapshots: the first two, then the last two. */
		if (n > 6 && k == 2) {
			fprintf(f, " -> ... (%u more)", n - 4);
			k = n - 3;
			continue;
		}
		fprintf(f, "%s%s", k ? " -> " : " ", util_num(a, growth_bytes(g, k, id)));
	}
	fputc('\n', f);
}

/*
 * GROWTH, from a process's second snapshot on: the stacks whose live bytes
 * grew since its first snapshot, most first, each with its rate over the
 * run, whether it grew in every interval (the leak's signature), its live
 * bytes at each snapshot and its frames.
 */
static void
text_growth(FILE *f, const struct jt_snapshot *s, unsigned top)
{
	const struct jt_growth *g = s->growth;
	unsigned nsnap = growth_count(g);
	struct growth_row *rows;
	size_t n, i, shown, kept;
	char a[32], b[32];

	if (nsnap < 2 || top == 0)
		return;
	rows = growth_rank(g, &n);
	/* The stacks the live list leaves out (the runtime's, the suppressed) are not the program's growth either. */
	for (i = kept = 0; i < n; i++)
		if (!report_supp(s, heap_stack_get(s->heap, rows[i].id)))
			rows[kept++] = rows[i];
	n = kept;
	shown = n < top ? n : top;
	fprintf(f, "GROWTH over %u snapshots, from %s ms to %s ms\n", growth_snapshots(g), util_num(a, growth_time(g, 0)),
		util_num(b, growth_time(g, nsnap - 1)));
	if (n == 0)
		fprintf(f, "no stack grew since the first snapshot\n\n");
	else
		fprintf(f, "top %zu of %zu growing %s by bytes grown:\n\n", shown, n, report_plural(n, "stack", "stacks"));
	for (i = 0; i < shown; i++) {
		fprintf(f, "#%zu: grew %s bytes at %s bytes/s, %s every interval\n", i + 1, util_num(a, rows[i].growth),
			util_num(b, (uint64_t)(rows[i].rate + 0.5)), rows[i].every ? "in" : "not in");
		text_growth_series(f, g, rows[i].id);
		report_text_frames(f, s->sym, heap_stack_get(s->heap, rows[i].id));
	}
	free(rows);
}

/*
 * What the first screen must say beside the heap's figures, when it holds:
 * --pages' own figures (PAGES, far below, lists them), and events the
 * kernel dropped, which make every figure above short (the totals, far
 * below, count them).
 */
static void
text_brief_more(FILE *f, const struct jt_snapshot *s)
{
	struct jt_heap_totals t;
	struct jt_heap_peak pk;
	char a[96], b[96], c[32];

	if (s->lost_events)
		fprintf(f, "LOST:     %s events: the kernel's ring buffers overflowed (--buffer-size), so the live, peak,\n"
			"          call and GROWTH figures are short of them\n", util_num(c, s->lost_events));
	if (s->pages) {
		heap_totals(s->pages, &t);
		heap_peak(s->pages, &pk);
		fprintf(f, "pages:    %s live, peak %s (--pages, apart from the heap)\n",
			text_regions(a, sizeof(a), t.live_bytes, t.live_blocks),
			text_regions(b, sizeof(b), pk.live_bytes, pk.live_blocks));
	}
	fputc('\n', f);
}

/* The one-line answer under the header: what is live, what the runtime holds, the peak, the calls. */
static void
text_brief(FILE *f, const struct jt_snapshot *s, const struct jt_heap_totals *t, const struct lists_supp *sup,
	   uint32_t nlive)
{
	char a[32], b[32], c[32], bb[96];

	fprintf(f, "live:     %s from %s %s", report_bytes_blocks(bb, sizeof(bb), t->live_bytes - sup->bytes - sup->rt_bytes,
								 t->live_blocks - sup->blocks - sup->rt_blocks),
		util_num(a, nlive), report_plural(nlive, "stack", "stacks"));
	if (sup->rt_stacks)
		fprintf(f, ", runtime %s", report_bytes_blocks(bb, sizeof(bb), sup->rt_bytes, sup->rt_blocks));
	if (sup->stacks)
		fprintf(f, ", suppressed %s", report_bytes_blocks(bb, sizeof(bb), sup->bytes, sup->blocks));
	fprintf(f, "\nin all:   peak %s bytes; %s allocation %s of %s bytes, %s %s\n", util_num(a, t->peak_live_bytes),
		util_num(b, report_alloc_calls(s)), report_plural(report_alloc_calls(s), "call", "calls"),
		util_num(c, t->bytes_allocated), util_num(bb, t->frees), report_plural(t->frees, "free", "frees"));
	text_brief_more(f, s);
}


/*
 * The text report, in this order, the answer first:
 *   a header (command, pid, snapshot reason, how the process stands, and a
 *   note when we attached) and two lines of figures (live bytes less what
 *   the runtime rules and the suppressions hold, those two, the peak, the
 *   calls); with --leak-check the LEAK CHECK section (report_leak_text);
 *   from a process's second snapshot on, GROWTH (text_growth); the invalid
 *   frees by stack (when there are any, see text_invalid_frees); then the
 *   main list: the top s->top stacks in the order of --sort (live bytes by
 *   default), each as a figure line (report_lists.c) followed by its
 *   frames (see report_text_frames) and, for a stack cut at --depth,
 *   "... (stack cut at --depth N)". Then the other lists as sections, each
 *   top s->top_rest, skipping the one --sort shows and those with no stack:
 *   LIVE, PEAK, MOST ALLOCATION CALLS, MOST BYTES ALLOCATED, MOST TEMPORARY
 *   ALLOCATIONS. Stacks of the runtime rules (supp_add_runtime) are left out
 *   of every list and counted on one "runtime:" line; the live list leaves
 *   out suppressed stacks too, counted on a "suppressed:" line. Then the
 *   calls per allocator function and the totals (with what
 *   --min-size/--max-size left out, and a NOT TRACED line per traced
 *   function without a breakpoint). Last a "SUMMARY: N bytes in M blocks
 *   still live from K stacks" line, suppressed and runtime stacks not
 *   counted. s->sections (--sections) picks sections; a top of 0 leaves a
 *   list out, header and all. --sort definitely-lost makes the main list
 *   the stacks by bytes definitely lost (direct and indirect); it is never
 *   a section.
 * Figures use thousands separators throughout (see report_num).
 */
int
report_text(FILE *f, const struct jt_snapshot *s)
{
	struct jt_heap_totals t;
	struct lists_supp sup;
	struct report_leak rl;
	uint32_t nlive;
	char a[32], b[32], c[32], bb[96];

	heap_totals(s->heap, &t);
	report_leak_init(&rl, s);
	nlive = lists_live(s, &sup, &rl);
	/* Half-way through a snapshot, the program stopped: where a test may make jmptrace fault. */
	testfault_point("snapshot");
	text_header(f, s);
	text_brief(f, s, &t, &sup, nlive);
	if (report_wants(s, SECTION_LEAKS))
		report_leak_text(f, s);
	if (report_wants(s, SECTION_GROWTH))
		text_growth(f, s, s->top);
	if (report_wants(s, SECTION_INVALID))
		text_invalid_frees(f, s, &t);
	lists_write(f, s, &rl);
	if (report_wants(s, SECTION_TOTALS))
		text_totals(f, s, &t);
	if (s->pages && report_wants(s, SECTION_PAGES))
		text_pages(f, s, s->top);
	text_nodebug(f, s);
	fprintf(f, "SUMMARY: %s bytes in %s %s still live from %s %s",
		util_num(a, t.live_bytes - sup.bytes - sup.rt_bytes), util_num(b, t.live_blocks - sup.blocks - sup.rt_blocks),
		report_plural(t.live_blocks - sup.blocks - sup.rt_blocks, "block", "blocks"), util_num(c, nlive),
		report_plural(nlive, "stack", "stacks"));
	if (sup.rt_stacks)
		fprintf(f, " (and the runtime's %s)", report_bytes_blocks(bb, sizeof(bb), sup.rt_bytes, sup.rt_blocks));
	fputc('\n', f);
	report_leak_free(&rl);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
