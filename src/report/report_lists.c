/* report_lists.c - the text report's lists of stacks: ranked by a cost, suppressed and runtime stacks counted apart, a figure line per stack. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "report_leak.h"
#include "report_lists.h"
#include "supp.h"
#include "util.h"

/*
 * The figure line of a stack: its figure for the list it is in (cost)
 * first, then all its other counters, so that every list shows them all:
 *   #1: 1,000 bytes in 1 block live; 3 allocation calls of 3,500 bytes in all from this stack;
 *       peak 3,000 bytes in 2 blocks, 2 frees, 1 temporary; oldest block 900 ms old, newest 20 ms
 * (on one line; the ages in the live list only). The live list's wording is the report's from before the
 * other lists, which scripts may read.
 */
static void
lists_stack_line(FILE *f, const struct jt_snapshot *s, const struct jt_stack *st, enum report_cost cost,
		unsigned rank, const struct report_leak *rl)
{
	uint64_t oldest, newest;
	char live[96], peak[96], lost[96], a[32], b[32], c[32];
	const char *calls = report_plural(st->alloc_calls, "call", "calls");

	report_bytes_blocks(live, sizeof(live), st->live_bytes, st->live_blocks);
	report_bytes_blocks(peak, sizeof(peak), st->peak_bytes, st->peak_blocks);
	util_num(a, st->alloc_calls);
	util_num(b, st->alloc_bytes);
	fprintf(f, "#%u: ", rank);
	switch (cost) {
	case COST_PEAK:
		fprintf(f, "%s at the peak; live %s, %s allocation %s of %s bytes", peak, live, a, calls, b);
		break;
	case COST_CALLS:
		fprintf(f, "%s allocation %s of %s bytes; live %s, peak %s", a, calls, b, live, peak);
		break;
	case COST_BYTES:
		fprintf(f, "%s bytes allocated in %s %s; live %s, peak %s", b, a, calls, live, peak);
		break;
	case COST_TEMPORARY:
		fprintf(f, "%s temporary %s (%" PRIu64 "%% of %s %s); live %s, peak %s, %s bytes allocated",
			util_num(c, st->temporary), report_plural(st->temporary, "allocation", "allocations"),
			st->alloc_calls ? (st->temporary * 100 + st->alloc_calls / 2) / st->alloc_calls : 0,
			a, calls, live, peak, b);
		break;
	case COST_DEFINITELY_LOST:
		/* Direct and indirect, as the cost counts them (report_leak.h). */
		fprintf(f, "%s definitely lost; live %s, peak %s",
			report_bytes_blocks(lost, sizeof(lost), report_leak_cost(rl, st, cost),
					  rl->lost_blocks ? rl->lost_blocks[st->id] : 0), live, peak);
		break;
	case COST_LIVE:
	default:
		fprintf(f, "%s live; %s allocation %s of %s bytes in all from this stack; peak %s",
			live, a, calls, b, peak);
		break;
	}
	fprintf(f, ", %s %s", util_num(c, st->frees), report_plural(st->frees, "free", "frees"));
	if (cost != COST_TEMPORARY)
		fprintf(f, ", %s temporary", util_num(c, st->temporary));
	/* The live list's last words: how old its blocks are (live ones, of the snapshot's view). */
	if (cost == COST_LIVE && heap_stack_age(s->heap, st->id, &oldest, &newest) == 0)
		fprintf(f, "; oldest block %s ms old, newest %s ms", util_num(a, oldest), util_num(b, newest));
	fputc('\n', f);
}

/* A list of stacks: the main one (--sort) and the sections after it, in this order. */
struct lists_def {
	enum report_cost cost;
	enum heap_rank rank;
	const char *title;	/* the section's header; the main list has none */
	const char *by;		/* "top N of M stacks by ..." */
	const char *none;	/* the main list's line when no stack ranks */
};

static const struct lists_def lists_defs[] = {
	{ COST_LIVE, HEAP_RANK_LIVE, "LIVE", "live bytes", "no stack holds live blocks" },
	{ COST_PEAK, HEAP_RANK_PEAK, NULL, "live bytes at the peak", "no stack was live at the peak" },
	{ COST_CALLS, HEAP_RANK_CALLS, "MOST ALLOCATION CALLS", "allocation calls", "no stack allocated" },
	{ COST_BYTES, HEAP_RANK_BYTES, "MOST BYTES ALLOCATED", "bytes allocated", "no stack allocated" },
	{ COST_TEMPORARY, HEAP_RANK_TEMPORARY, "MOST TEMPORARY ALLOCATIONS", "temporary allocations",
	  "no stack made temporary allocations" },
	/* Only ever the main list: the LEAK CHECK section lists the loss records. */
	{ COST_DEFINITELY_LOST, HEAP_RANK_ALL, NULL, "bytes definitely lost",
	  "no stack lost a block definitely" },
};

/* Orders stack ids by their definitely lost bytes, most first (ties: lower id). */
static int
lists_lost_cmp(const void *a, const void *b, void *arg)
{
	const uint64_t *lost = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (lost[x] != lost[y])
		return lost[x] > lost[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Keeps of ids[0..*n) (every stack, by id) those with bytes definitely
 * lost, most first. Suppressed records are already out of rl's figures.
 */
static uint32_t *
lists_ranked_lost(const struct jt_snapshot *s, uint32_t *ids, uint32_t *n, const struct report_leak *rl)
{
	uint32_t i, kept = 0;

	for (i = 0; rl->lost_bytes && i < *n; i++)
		if (report_leak_cost(rl, heap_stack_get(s->heap, ids[i]), COST_DEFINITELY_LOST))
			ids[kept++] = ids[i];
	*n = kept;
	if (kept)
		qsort_r(ids, kept, sizeof(*ids), lists_lost_cmp, rl->lost_bytes);
	return ids;
}

/*
 * The ranked ids of list l without the stacks of the runtime rules and, for
 * the live list, those another suppression matches (both counted in *sup).
 * Returns a malloc'ed array.
 */
static uint32_t *
lists_ranked(const struct jt_snapshot *s, const struct lists_def *l, uint32_t *n, struct lists_supp *sup,
	     const struct report_leak *rl)
{
	uint32_t *ids = report_rank(s->heap, l->rank, n), i, kept = 0;
	const char *match;

	memset(sup, 0, sizeof(*sup));
	if (l->cost == COST_DEFINITELY_LOST)
		return lists_ranked_lost(s, ids, n, rl);
	if (!s->supp)
		return ids;
	for (i = 0; i < *n; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, ids[i]);

		match = report_supp(s, st);
		if (match && supp_is_runtime(s->supp, match)) {
			sup->rt_bytes += st->live_bytes;
			sup->rt_blocks += st->live_blocks;
			sup->rt_stacks++;
		} else if (match && l->cost == COST_LIVE) {
			sup->bytes += st->live_bytes;
			sup->blocks += st->live_blocks;
			sup->stacks++;
		} else {
			ids[kept++] = ids[i];
		}
	}
	*n = kept;
	return ids;
}

/* The line that counts what the runtime rules left out of a list: live figures in the live list. */
static void
lists_runtime_line(FILE *f, const struct lists_def *l, const struct lists_supp *sup)
{
	char a[32], bb[96];

	if (!sup->rt_stacks)
		return;
	if (l->cost == COST_LIVE)
		fprintf(f, "runtime: %s from %s %s of the C library and the dynamic loader (--show-runtime lists them)\n\n",
			report_bytes_blocks(bb, sizeof(bb), sup->rt_bytes, sup->rt_blocks),
			util_num(a, sup->rt_stacks), report_plural(sup->rt_stacks, "stack", "stacks"));
	else
		fprintf(f, "runtime: %s %s of the C library and the dynamic loader not listed (--show-runtime lists them)\n\n",
			util_num(a, sup->rt_stacks), report_plural(sup->rt_stacks, "stack", "stacks"));
}

/* The peak section's header: the peak's figures, as heap_peak recorded them. */
static void
lists_peak_title(FILE *f, const struct jt_snapshot *s)
{
	struct jt_heap_peak pk;
	char bb[96], a[32];

	heap_peak(s->heap, &pk);
	fprintf(f, "PEAK: %s at %s ms\n",
		report_bytes_blocks(bb, sizeof(bb), pk.live_bytes, pk.live_blocks), util_num(a, pk.time_ms));
}

/*
 * Writes list l: for a section its header (nothing at all when no stack
 * but the runtime's ranks, or when top is 0; the peak's figures for the
 * peak list, main or not), "top N of M stacks by ...", the top stacks with
 * their frames, and what suppressions and the runtime rules left out, in
 * *sup too. Returns M.
 */
static uint32_t
lists_one(FILE *f, const struct jt_snapshot *s, const struct lists_def *l, int main_list, unsigned top,
	  struct lists_supp *sup, const struct report_leak *rl)
{
	uint32_t *ids, n, i, shown;
	char a[32], bb[96];

	ids = lists_ranked(s, l, &n, sup, rl);
	shown = n < top ? n : top;
	if (top == 0 || (!main_list && n == 0 && sup->stacks == 0)) {
		free(ids);
		return n;
	}
	if (l->cost == COST_PEAK)
		lists_peak_title(f, s);
	else if (!main_list)
		fprintf(f, "%s\n", l->title);
	if (n == 0)
		fprintf(f, "%s\n\n", l->none);
	else
		fprintf(f, "top %u of %s %s by %s:\n\n", shown, util_num(a, n),
			report_plural(n, "stack", "stacks"), l->by);
	for (i = 0; i < shown; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, ids[i]);

		lists_stack_line(f, s, st, l->cost, i + 1, rl);
		report_text_frames(f, s->sym, st);
	}
	if (sup->stacks)
		fprintf(f, "suppressed: %s from %s %s\n\n",
			report_bytes_blocks(bb, sizeof(bb), sup->bytes, sup->blocks),
			util_num(a, sup->stacks), report_plural(sup->stacks, "stack", "stacks"));
	lists_runtime_line(f, l, sup);
	free(ids);
	return n;
}

/* The section a list is, for --sections: the main list by --sort counts as its cost's. */
static enum report_section
lists_section(const struct lists_def *l)
{
	switch (l->cost) {
	case COST_PEAK: return SECTION_PEAK;
	case COST_CALLS: return SECTION_CALLS;
	case COST_BYTES: return SECTION_BYTES;
	case COST_TEMPORARY: return SECTION_TEMPORARY;
	case COST_DEFINITELY_LOST: return SECTION_LEAKS;
	case COST_LIVE:
	default: return SECTION_LIVE;
	}
}

uint32_t
lists_live(const struct jt_snapshot *s, struct lists_supp *sup, const struct report_leak *rl)
{
	uint32_t n;

	free(lists_ranked(s, &lists_defs[0], &n, sup, rl));
	return n;
}

void
lists_write(FILE *f, const struct jt_snapshot *s, const struct report_leak *rl)
{
	const struct lists_def *l, *main_list = &lists_defs[0];
	struct lists_supp sup;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lists_defs); i++)
		if (lists_defs[i].cost == s->sort)
			main_list = &lists_defs[i];
	for (i = 0; i <= ARRAY_SIZE(lists_defs); i++) {
		l = i == 0 ? main_list : &lists_defs[i - 1];
		if (i > 0 && (l == main_list || l->cost == COST_DEFINITELY_LOST))
			continue;
		if (report_wants(s, lists_section(l)))
			lists_one(f, s, l, i == 0, i == 0 || !s->top_rest ? s->top : s->top_rest, &sup, rl);
	}
}
