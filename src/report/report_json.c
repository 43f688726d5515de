/* report_json.c - the heap report for tools: one JSON file that stays valid after every snapshot. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"
#include "heap.h"
#include "outfile.h"
#include "report.h"
#include "report_common.h"
#include "report_jsonval.h"
#include "report_leak.h"
#include "report_seen.h"
#include "supp.h"
#include "sym.h"
#include "util.h"

/*
 * The opening and closing text of a JSON report; report_json_add writes
 * over the closing one. "format" 2: a snapshot lists only the stacks that
 * changed, and a stack's frames are in its first entry (doc/formats.md).
 */
#define JSON_HEAD "{\"format\": " JSON_FORMAT_STR ", \"snapshots\": ["
#define JSON_TAIL "\n]}\n"

struct jt_json_out {
	struct jt_outfile *out;
	int stream;		/* out is a stream: the opening text waits for the first snapshot, the closing for report_json_close */
	int failed;		/* a write failed: the stream gets nothing more */
	unsigned nsnapshots;	/* written so far: decides whether a comma is due */
	struct jt_seen *seen;	/* what the file holds of each process's stacks */
};

/* "histogram": {"16": n, ...}: the non-zero buckets, by their upper bound, smallest first. */
static void
json_histogram(FILE *f, const struct jt_stack *st)
{
	const char *sep = "";
	unsigned k;

	fputs("\"histogram\": {", f);
	for (k = 0; st->hist && k < HEAP_HIST_BUCKETS; k++) {
		if (!st->hist[k])
			continue;
		/* Bucket 64 is "sizes above 2^63": its bound, 2^64, is one past UINT64_MAX. */
		if (k >= 64)
			fprintf(f, "%s\"18446744073709551616\": %" PRIu64, sep, st->hist[k]);
		else
			fprintf(f, "%s\"%" PRIu64 "\": %" PRIu64, sep, heap_hist_bound(k), st->hist[k]);
		sep = ", ";
	}
	fputc('}', f);
}

/*
 * One stack: its id, its counters, when its oldest and newest live block
 * were allocated (when it has live blocks), the suppression that matches
 * it (supp, or NULL), its frames when the file holds none of its entries yet (first).
 */
static void
json_stack(FILE *f, const struct jt_snapshot *s, const struct jt_stack *st, const char *supp,
	   const struct seen_fig *fig, int first, struct jt_seen *seen)
{
	fprintf(f, "  {\"id\": %" PRIu32 ", \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64, st->id,
		st->live_bytes, st->live_blocks);
	/* When, not how long ago: an age changes at every snapshot, and would list the stack again. */
	if (fig->aged)
		fprintf(f, ", \"oldest_ms\": %" PRIu64 ", \"newest_ms\": %" PRIu64, fig->oldest_ms, fig->newest_ms);
	fprintf(f, ", \"alloc_calls\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64 ",\n   \"frees\": %" PRIu64
		", \"temporary\": %" PRIu64 ", \"peak_bytes\": %" PRIu64 ", \"peak_blocks\": %" PRIu64 ", ",
		st->alloc_calls, st->alloc_bytes, st->frees, st->temporary, st->peak_bytes, st->peak_blocks);
	json_histogram(f, st);
	if (supp) {
		fputs(", \"suppressed\": ", f);
		jsonval_str(f, supp);
		/* A rule of the runtime's (stdio buffers...): the text counts these on their own line. */
		if (supp_is_runtime(s->supp, supp))
			fputs(", \"runtime\": true", f);
	}
	/* The frames once per file: a later entry of the stack has its figures only. */
	if (first) {
		fputs(",\n   ", f);
		jsonval_frame_ids(f, s, st, seen);
	}
	fputc('}', f);
}

/* st's figures as seen_changed compares them; the ages as allocation times in the snapshot's clock. */
static void
json_fig(const struct jt_snapshot *s, const struct jt_stack *st, struct seen_fig *fig)
{
	uint64_t oldest, newest;

	*fig = (struct seen_fig){
		.live_bytes = st->live_bytes, .live_blocks = st->live_blocks,
		.alloc_calls = st->alloc_calls, .alloc_bytes = st->alloc_bytes,
		.frees = st->frees, .temporary = st->temporary,
		.peak_bytes = st->peak_bytes, .peak_blocks = st->peak_blocks,
	};
	if (st->live_blocks && heap_stack_age(s->heap, st->id, &oldest, &newest) == 0) {
		fig->aged = 1;
		fig->oldest_ms = s->time_ms >= oldest ? s->time_ms - oldest : 0;
		fig->newest_ms = s->time_ms >= newest ? s->time_ms - newest : 0;
	}
}

/* "invalid_frees": [{"count": N, "inside": M, "frames": [...]}, ...], most first; M of N inside a live block. */
static void
json_invalid_frees(FILE *f, const struct jt_snapshot *s)
{
	uint32_t *ids, n, i;

	ids = report_rank(s->heap, HEAP_RANK_INVALID, &n);
	fputs(",\n \"invalid_frees\": [", f);
	for (i = 0; i < n; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, ids[i]);

		fprintf(f, "%s  {\"count\": %" PRIu64 ", \"inside\": %" PRIu64 ",\n   ", i ? ",\n" : "\n",
			st->invalid_frees, st->inside_frees);
		jsonval_frames(f, s, st);
		fputc('}', f);
	}
	free(ids);
	fputs(n ? "\n ]" : "]", f);
}

/*
 * "untraced": [{"function", "module", "reason"}, ...]: traced functions without a breakpoint, whose
 * calls are not counted; with "missed_until_ms" when they are counted again since then.
 */
static void
json_untraced(FILE *f, const struct jt_snapshot *s)
{
	fputs(",\n \"untraced\": [", f);
	for (size_t i = 0; i < s->nuntraced; i++) {
		fputs(i ? ", {\"function\": " : "{\"function\": ", f);
		jsonval_str(f, alloc_fns[s->untraced[i].fn].name);
		fputs(", \"module\": ", f);
		jsonval_str(f, s->untraced[i].module);
		fputs(", \"reason\": ", f);
		jsonval_str(f, s->untraced[i].reason);
		if (s->untraced[i].missed_until_ms)
			fprintf(f, ", \"missed_until_ms\": %" PRIu64, s->untraced[i].missed_until_ms);
		fputc('}', f);
	}
	fputc(']', f);
}

/* "no_debug_info": [module, ...]: the modules the frames above fell in that had no debug information at all. */
static void
json_nodebug(FILE *f, const struct jt_snapshot *s)
{
	size_t n;
	const char *const *mods = sym_nodebug_modules(s->sym, &n);

	fputs(",\n \"no_debug_info\": [", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		jsonval_str(f, mods[i]);
	}
	fputc(']', f);
}

/*
 * The stacks a snapshot lists, in a fixed order: those with live blocks by
 * live bytes (as when the list held only those), then every other stack
 * that allocated, by id. With the suppression of each (NULL for none) in
 * *supp (report_supp: matched once per stack in the run).
 */
struct json_stacks {
	uint32_t *ids, n;
	const char **supp;
	uint64_t supp_bytes, supp_blocks, supp_stacks;	/* live figures of the suppressed ones */
};

static void
json_stacks_collect(const struct jt_snapshot *s, struct json_stacks *js)
{
	uint32_t *all, nall, i;

	memset(js, 0, sizeof(*js));
	js->ids = report_rank(s->heap, HEAP_RANK_LIVE, &js->n);
	all = report_rank(s->heap, HEAP_RANK_ALL, &nall);
	js->ids = xrealloc(js->ids, (js->n + nall + 1) * sizeof(*js->ids));
	for (i = 0; i < nall; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, all[i]);

		if (st->alloc_calls && !st->live_blocks)
			js->ids[js->n++] = all[i];
	}
	free(all);
	js->supp = xcalloc(js->n + 1, sizeof(*js->supp));
	for (i = 0; s->supp && i < js->n; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, js->ids[i]);

		js->supp[i] = report_supp(s, st);
		if (js->supp[i] && st->live_blocks) {
			js->supp_bytes += st->live_bytes;
			js->supp_blocks += st->live_blocks;
			js->supp_stacks++;
		}
	}
}

/* With --min-size/--max-size, "filtered": the figures of the stack-less allocations outside the range. */
static void
json_filtered(FILE *f, const struct jt_snapshot *s)
{
	const struct jt_stack *st = NULL;
	uint32_t id, n = heap_stack_count(s->heap);

	/* No maximum is UINT64_MAX, or 0 as in jt_options (a zeroed snapshot filters nothing). */
	if (s->min_size == 0 && (s->max_size == 0 || s->max_size == UINT64_MAX))
		return;
	for (id = 0; id < n && !st; id++)
		if (heap_stack_get(s->heap, id)->filtered)
			st = heap_stack_get(s->heap, id);
	fprintf(f, ", \"filtered\": {\"alloc_calls\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
		", \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64 "}",
		st ? st->alloc_calls : 0, st ? st->alloc_bytes : 0, st ? st->live_bytes : 0,
		st ? st->live_blocks : 0);
}

static void
json_totals(FILE *f, const struct jt_snapshot *s, const struct jt_heap_totals *t,
	    const struct json_stacks *js)
{
	uint64_t temporary = 0;
	uint32_t id, n = heap_stack_count(s->heap);
	unsigned i;

	/* Every stack's, the filtered one's too: a total of the whole run. */
	for (id = 0; id < n; id++)
		temporary += heap_stack_get(s->heap, id)->temporary;
	fputs(" \"totals\": {\"calls\": {", f);
	for (i = 0; i < s->ncalls; i++) {
		fputs(i ? ", " : "", f);
		jsonval_str(f, alloc_fns[s->call_fns[i]].name);
		fprintf(f, ": %" PRIu64, s->calls[i]);
	}
	fprintf(f, "}, \"alloc_calls\": %" PRIu64 ", \"bytes_allocated\": %" PRIu64
		", \"frees\": %" PRIu64 ", \"unknown_frees\": %" PRIu64
		", \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
		", \"peak_live_bytes\": %" PRIu64 ",\n  \"temporary\": %" PRIu64,
		report_alloc_calls(s), t->bytes_allocated, t->frees, t->unknown_frees,
		t->live_bytes, t->live_blocks, t->peak_live_bytes, temporary);
	/* Beside --pages' own object, the view these figures are. */
	if (s->pages)
		fputs(", \"view\": \"heap\"", f);
	json_filtered(f, s);
	/* Then the source, and what it lost: with a loss every figure is a lower bound. */
	fprintf(f, ", \"suppressed\": {\"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
		", \"stacks\": %" PRIu64 "}, \"source\": \"%s\", \"lost_events\": %" PRIu64 "},\n",
		js->supp_bytes, js->supp_blocks, js->supp_stacks, s->source_uprobe ? "uprobe" : "ptrace", s->lost_events);
}

/* "stacks": [[id, live_bytes], ...] of sample i, left out when the heap merged it into a later sample's. */
static void
json_sample_stacks(FILE *f, const struct jt_heap *h, size_t i)
{
	const struct jt_heap_change *ch;
	size_t n, k;

	if (!(ch = heap_timeline_stacks(h, i, &n)))
		return;
	fputs(", \"stacks\": [", f);
	for (k = 0; k < n; k++)
		fprintf(f, "%s[%" PRIu32 ", %" PRIu64 "]", k == 0 ? "" : k % 8 ? ", " : ",\n    ",
			ch[k].stack_id, ch[k].live_bytes);
	fputc(']', f);
}

/*
 * "timeline": [...], h's samples from the from-th (those before went into
 * this file's earlier snapshots of this process), each {"time_ms",
 * "live_bytes", blocks (the count's key: "live_blocks", the pages'
 * "live_regions"), "stacks"}.
 */
static void
json_timeline(FILE *f, const struct jt_heap *h, size_t from, const char *blocks)
{
	const struct jt_heap_sample *tl;
	size_t n, i;

	tl = heap_timeline(h, &n);
	fputs("\"timeline\": [", f);
	for (i = from; i < n; i++) {
		fprintf(f, "%s{\"time_ms\": %" PRIu64 ", \"live_bytes\": %" PRIu64 ", \"%s\": %" PRIu64,
			i == from ? "\n  " : ",\n  ", tl[i].time_ms, tl[i].live_bytes, blocks, tl[i].live_blocks);
		json_sample_stacks(f, h, i);
		fputc('}', f);
	}
	fputs(n > from ? "\n ]" : "]", f);
}

/* "peak": the recorded peak, and the heap's "timeline" since s->timeline_from. */
static void
json_peak_timeline(FILE *f, const struct jt_snapshot *s)
{
	struct jt_heap_peak pk;

	heap_peak(s->heap, &pk);
	fprintf(f, ",\n \"peak\": {\"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
		", \"time_ms\": %" PRIu64 "},\n ", pk.live_bytes, pk.live_blocks, pk.time_ms);
	json_timeline(f, s->heap, s->timeline_from, "live_blocks");
}

/*
 * --pages: "pages", the program's own mappings, a view apart from the
 * heap's: {"view": "pages", "live_bytes", "live_regions", "peak_bytes",
 * "peak": {...}, "calls": {"mmap": n, ...}, "stacks": [{"id", "bytes",
 * "regions", "peak_bytes", "peak_regions", "mappings", "frames"}, ...] (the
 * stacks with live pages, most first), "timeline"}.
 */
static void
json_pages(FILE *f, const struct jt_snapshot *s)
{
	struct jt_heap_totals t;
	struct jt_heap_peak pk;
	uint32_t n, i, *ids;

	if (!s->pages)
		return;
	heap_totals(s->pages, &t);
	heap_peak(s->pages, &pk);
	fprintf(f, ",\n \"pages\": {\"view\": \"pages\", \"live_bytes\": %" PRIu64 ", \"live_regions\": %" PRIu64
		", \"peak_bytes\": %" PRIu64 ", \"peak\": {\"live_bytes\": %" PRIu64 ", \"live_regions\": %" PRIu64
		", \"time_ms\": %" PRIu64 "}, \"calls\": {", t.live_bytes, t.live_blocks, pk.live_bytes, pk.live_bytes,
		pk.live_blocks, pk.time_ms);
	for (i = FN_MMAP; i <= FN_BRK; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i == FN_MMAP ? "" : ", ", alloc_fns[i].name, s->pages_calls[i - FN_MMAP]);
	fputs("},\n  \"stacks\": [", f);
	ids = report_rank(s->pages, HEAP_RANK_LIVE, &n);
	for (i = 0; i < n; i++) {
		const struct jt_stack *st = heap_stack_get(s->pages, ids[i]);

		fprintf(f, "%s{\"id\": %" PRIu32 ", \"bytes\": %" PRIu64 ", \"regions\": %" PRIu64
			", \"peak_bytes\": %" PRIu64 ", \"peak_regions\": %" PRIu64 ", \"mappings\": %" PRIu64 ", ",
			i ? ",\n  " : "\n  ", st->id, st->live_bytes, st->live_blocks, st->peak_bytes, st->peak_blocks,
			st->alloc_calls);
		jsonval_frames(f, s, st);
		fputc('}', f);
	}
	fputs(n ? "\n  ]" : "]", f);
	free(ids);
	fputs(", ", f);
	json_timeline(f, s->pages, s->pages_timeline_from, "live_regions");
	fputc('}', f);
}

static void
json_header(FILE *f, const struct jt_snapshot *s)
{
	char sig[32];

	fputs("{\"reason\": ", f);
	jsonval_str(f, s->reason);
	fprintf(f, ", \"pid\": %d, \"command\": ", s->pid);
	jsonval_str(f, s->command);
	fputs(", \"exe\": ", f);
	jsonval_str(f, s->exe);
	fprintf(f, ", \"exited\": %s, \"exit_status\": ", s->exited ? "true" : "false");
	if (s->exited && !s->killed_by)
		fprintf(f, "%d", s->exit_status);
	else
		fputs("null", f);
	fputs(", \"killed_by\": ", f);
	jsonval_str(f, s->killed_by ? report_signame(s->killed_by, sig, sizeof(sig)) : NULL);
	fprintf(f, ", \"attached\": %s, \"seq\": %u, \"time_ms\": %" PRIu64 ",\n",
		s->attached ? "true" : "false", s->seq, s->time_ms);
	/* An image after an exec: its stack ids and timeline are its own, not those of the pid's image before. */
	if (s->execs)
		fprintf(f, " \"execs\": %u,\n", s->execs);
	/* An image an exec ended: which of the process's execs it was (the pid's next snapshot is of the new program). */
	if (s->image_ended)
		fprintf(f, " \"ended_at_exec\": %u,\n", s->image_ended);
	/* --older-than: every live figure of the snapshot counts only blocks this old. */
	if (s->older_than_ms)
		fprintf(f, " \"older_than_ms\": %" PRIu64 ",\n", s->older_than_ms);
}

/* A scheduled snapshot's "due_ms", "late_ms" and "late_why" (null unless it is late). */
static void
json_due(FILE *f, const struct jt_due *d)
{
	if (!d)
		return;
	fprintf(f, " \"due_ms\": %" PRIu64 ", \"late_ms\": %" PRIu64 ", \"late_why\": ", d->due_ms, d->late_ms);
	jsonval_str(f, d->late_why);
	fputs(",\n", f);
}

/*
 * "growth", from a process's second snapshot on: the time_ms of the
 * snapshots it keeps, and per stack that grew since the first
 * (growth_rank's order) its rate over the run and whether it grew in every
 * interval. Format 2 leaves out each stack's live bytes at each: the heap's
 * snapshots in the file have them, and repeating them made every snapshot
 * longer.
 */
static void
json_growth(FILE *f, const struct jt_snapshot *s)
{
	const struct jt_growth *g = s->growth;
	unsigned k, nsnap = growth_count(g);
	struct growth_row *rows;
	size_t n, i;

	if (nsnap < 2)
		return;
	fputs(",\n \"growth\": {\"times_ms\": [", f);
	for (k = 0; k < nsnap; k++)
		fprintf(f, "%s%" PRIu64, k ? ", " : "", growth_time(g, k));
	fputs("], \"stacks\": [", f);
	rows = growth_rank(g, &n);
	for (i = 0; i < n; i++)
		fprintf(f, "%s{\"id\": %" PRIu32 ", \"rate_bytes_per_s\": %.1f, \"grew_every_interval\": %s}",
			i == 0 ? "\n  " : i % 4 ? ", " : ",\n  ", rows[i].id, rows[i].rate, rows[i].every ? "true" : "false");
	fputs(n ? "\n ]}" : "]}", f);
	free(rows);
}

/*
 * "stacks": those whose figures changed since the heap's last snapshot in
 * this file (every one in its first), in the full list's order.
 */
static void
json_stacks(FILE *f, const struct jt_snapshot *s, const struct json_stacks *js, struct jt_seen *seen,
	    struct seen_heap *sh)
{
	struct seen_fig fig;
	const char *frames;
	uint32_t i, listed = 0;
	int first;

	fputs(" \"stacks\": [", f);
	for (i = 0; i < js->n; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, js->ids[i]);

		json_fig(s, st, &fig);
		if (!seen_changed(sh, st->id, &fig, &first))
			continue;
		fputs(listed++ ? ",\n" : "\n", f);
		json_stack(f, s, st, js->supp[i], &fig, first, seen);
	}
	fputs(listed ? "\n ]" : "]", f);
	frames = seen_frames_take(seen);
	fprintf(f, ",\n \"new_frames\": [%s%s]", *frames ? "\n  " : "", frames);
}

static void
json_snapshot(FILE *f, const struct jt_snapshot *s, struct jt_seen *seen)
{
	struct seen_heap *sh = seen_heap_of(seen, s->pid, s->execs, s->heap);
	struct jt_heap_totals t;
	struct json_stacks js;

	heap_totals(s->heap, &t);
	json_stacks_collect(s, &js);
	json_header(f, s);
	fprintf(f, " \"heap\": %u, \"stacks_listed\": \"changed\",\n", seen_heap_key(sh));
	json_due(f, s->due);
	json_totals(f, s, &t, &js);
	json_stacks(f, s, &js, seen, sh);
	json_invalid_frees(f, s);
	json_untraced(f, s);
	json_nodebug(f, s);
	json_peak_timeline(f, s);
	report_leak_json(f, s, js.ids, js.n);
	json_growth(f, s);
	json_pages(f, s);
	free(js.ids);
	free(js.supp);
	fputc('}', f);
	/* Its image has no later snapshot: its record goes, and its heap's address may serve another. */
	if (s->exited || s->image_ended)
		seen_heap_end(sh);
}

struct jt_json_out *
report_json_open(const char *path)
{
	struct jt_json_out *j = xcalloc(1, sizeof(*j));
	int err;

	j->seen = seen_new();
	if (!(j->out = outfile_open(path)))
		goto fail;
	/* A file is an empty but valid report at once, so a run that dies early still leaves JSON. */
	if (!(j->stream = outfile_is_stream(j->out)) && outfile_publish(j->out, JSON_HEAD JSON_TAIL, JSON_TAIL) < 0)
		goto fail;
	return j;
fail:
	err = errno;
	outfile_close(j->out);
	seen_free(j->seen);
	free(j);
	errno = err;
	return NULL;
}

int
report_json_add(struct jt_json_out *j, const struct jt_snapshot *s)
{
	/* A file's snapshot goes in before its closing text (outfile_publish), a stream's after the last. */
	FILE *f = outfile_begin(j->out, NULL);

	if (!f)
		return -1;
	if (j->stream && !j->nsnapshots)
		fputs(JSON_HEAD, f);
	fputs(j->nsnapshots ? ",\n" : "\n", f);
	json_snapshot(f, s, j->seen);
	j->nsnapshots++;
	if (outfile_commit(j->out) == 0)
		return 0;
	j->failed = 1;
	return -1;
}

int
report_json_close(struct jt_json_out *j)
{
	FILE *f;
	int r = 0, err = 0;

	if (!j)
		return 0;
	/* A stream is one valid document once it ends (said once when it could not be). */
	if (j->stream && !j->failed) {
		if ((f = outfile_begin(j->out, NULL)))
			fputs(j->nsnapshots ? JSON_TAIL : JSON_HEAD JSON_TAIL, f);
		if (!f || outfile_commit_more(j->out) < 0) {
			r = -1;
			err = errno;
		}
	}
	if (outfile_close(j->out) < 0 && !r) {
		r = -1;
		err = errno;
	}
	seen_free(j->seen);
	free(j);
	errno = err;
	return r;
}

struct jt_seen *
report_json_seen_new(void)
{
	return seen_new();
}

void
report_json_seen_free(struct jt_seen *seen)
{
	seen_free(seen);
}

int
report_json_snapshot(FILE *f, const struct jt_snapshot *s, struct jt_seen *seen)
{
	json_snapshot(f, s, seen);
	return ferror(f) ? -1 : 0;
}
