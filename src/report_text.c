/* report_text.c - the heap report for people, valgrind style. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "sym.h"

/*
 * Text figures: every count and byte figure is a plain decimal with a comma
 * between groups of three digits ("1,234,567"), as valgrind prints them.
 * Addresses are "0x" and lowercase hex without padding. Returns buf.
 */
static const char *
report_num(char buf[32], uint64_t v)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), i, o = 0;

	for (i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/* Returns the singular or plural form of a noun for a count of n. */
static const char *
report_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static const char *
report_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Describes how the process stands: "exited with status 0", "killed by SIGSEGV", ... */
static void
text_status(FILE *f, const struct jt_snapshot *s)
{
	char sig[32];

	if (!s->exited)
		fprintf(f, "process:  still running\n");
	else if (s->killed_by)
		fprintf(f, "process:  killed by %s\n", report_signame(s->killed_by, sig, sizeof(sig)));
	else
		fprintf(f, "process:  exited with status %d\n", s->exit_status);
}

static void
text_header(FILE *f, const struct jt_snapshot *s)
{
	fprintf(f, "==== jmptrace heap report ====\n");
	fprintf(f, "command:  %s\n", s->command ? s->command : "(unknown)");
	fprintf(f, "pid:      %d\n", s->pid);
	fprintf(f, "snapshot: %s\n", s->reason ? s->reason : "(unknown)");
	text_status(f, s);
	if (s->attached) {
		fprintf(f, "note:     jmptrace attached to a running process, so blocks allocated\n"
			"          before the attach are unknown: they are not counted as live, and\n"
			"          frees of them are counted as unknown frees.\n");
	}
	fputc('\n', f);
}

/* Widest allocator name that will be printed, so the figures line up. */
static int
text_name_width(const struct jt_snapshot *s)
{
	int w = 20;
	unsigned i;

	for (i = 0; i < s->ncalls; i++)
		if (s->calls[i] && (int)strlen(alloc_fns[s->call_fns[i]].name) > w)
			w = (int)strlen(alloc_fns[s->call_fns[i]].name);
	return w;
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
			fprintf(f, "  %-*s %15s\n", w, alloc_fns[s->call_fns[i]].name, report_num(a, s->calls[i]));
	fprintf(f, "totals:\n");
	fprintf(f, "  %-*s %15s\n", w, "allocation calls", report_num(a, report_alloc_calls(s)));
	fprintf(f, "  %-*s %15s\n", w, "bytes allocated", report_num(a, t->bytes_allocated));
	fprintf(f, "  %-*s %15s\n", w, "frees", report_num(a, t->frees));
	fprintf(f, "  %-*s %15s\n", w, "unknown frees", report_num(a, t->unknown_frees));
	fprintf(f, "  %-*s %15s bytes in %s %s\n", w, "live", report_num(a, t->live_bytes),
		report_num(b, t->live_blocks), report_plural(t->live_blocks, "block", "blocks"));
	fprintf(f, "  %-*s %15s bytes\n", w, "peak live", report_num(a, t->peak_live_bytes));
	fputc('\n', f);
}

/*
 * One frame, valgrind style: "at" for the innermost, "by" for the others:
 *     at 0x401136: leak_here (leak.c:12)
 *     by 0x401150: helper (util.c:3) (inlined)
 *     by 0x7f12a0029d90: __libc_start_call_main (in libc.so.6)
 *     by 0x7f12a0029e40: libfoo.so+0x1e40
 *     by 0x10: ???
 */
static void
text_frame(FILE *f, const struct jt_frame *fr, int first)
{
	fprintf(f, "    %s 0x%" PRIx64 ": ", first ? "at" : "by", fr->address);
	if (fr->function)
		fputs(fr->function, f);
	else if (fr->module)
		fprintf(f, "%s+0x%" PRIx64, fr->module, fr->offset);
	else
		fputs("???", f);
	if (fr->file)
		fprintf(f, " (%s:%d)", report_basename(fr->file), fr->line);
	else if (fr->function && fr->module && !fr->signal_frame)
		fprintf(f, " (in %s)", fr->module);
	if (fr->inlined)
		fputs(" (inlined)", f);
	fputc('\n', f);
}

/* The frames of st, valgrind style (see text_frame), then a blank line. */
static void
text_frames(FILE *f, struct jt_sym *sym, const struct jt_stack *st)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	uint32_t i;
	int n, k, first = 1;

	if (st->depth == 0)
		fprintf(f, "    (no call stack was captured)\n");
	for (i = 0; i < st->depth; i++) {
		n = report_resolve(sym, st, i, fr);
		for (k = 0; k < n; k++, first = 0)
			text_frame(f, &fr[k], first);
	}
	if (st->truncated)
		fprintf(f, "    ... (stack cut at --depth %u)\n", st->depth);
	fputc('\n', f);
}

static void
text_stack(FILE *f, struct jt_sym *sym, const struct jt_stack *st, unsigned rank)
{
	char a[32], b[32], c[32], d[32];

	fprintf(f, "#%u: %s bytes in %s %s live; %s allocation %s of %s bytes in all from this stack\n",
		rank, report_num(a, st->live_bytes), report_num(b, st->live_blocks),
		report_plural(st->live_blocks, "block", "blocks"), report_num(c, st->alloc_calls),
		report_plural(st->alloc_calls, "call", "calls"), report_num(d, st->alloc_bytes));
	text_frames(f, sym, st);
}

/*
 * Every invalid free, grouped by the stack that made it, as memcheck lists
 * "Invalid free()": the free's caller first. Nothing when there is none.
 */
static void
text_invalid_frees(FILE *f, const struct jt_snapshot *s, const struct jt_heap_totals *t)
{
	uint32_t *ids, n, i;
	char a[32], b[32];

	ids = report_rank(s->heap, HEAP_RANK_INVALID, &n);
	if (n)
		fprintf(f, "%s invalid %s (of addresses that were no live block: double frees, "
			"frees of non-heap pointers) from %s %s:\n\n",
			report_num(a, t->invalid_frees), report_plural(t->invalid_frees, "free", "frees"),
			report_num(b, n), report_plural(n, "stack", "stacks"));
	for (i = 0; i < n; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, ids[i]);

		fprintf(f, "Invalid free #%u: %s %s from this stack\n", i + 1,
			report_num(a, st->invalid_frees), report_plural(st->invalid_frees, "call", "calls"));
		text_frames(f, s->sym, st);
	}
	free(ids);
}

/*
 * The text report, in this order:
 *   a header (command, pid, snapshot reason, how the process stands, and a
 *   note when we attached), the calls per allocator function (non-zero ones,
 *   in the caller's order), the totals, the invalid frees by stack (when
 *   there are any, see text_invalid_frees), then the top s->top stacks by live
 *   bytes, each as "#rank: live bytes, live blocks, allocation calls and
 *   bytes from the stack" followed by its frames (see text_frame) and, for a
 *   stack cut at --depth, "... (stack cut at --depth N)", and a closing
 *   "SUMMARY: N bytes in M blocks still live from K stacks" line.
 * Figures use thousands separators throughout (see report_num).
 */
int
report_text(FILE *f, const struct jt_snapshot *s)
{
	struct jt_heap_totals t;
	uint32_t *ids, n, i, shown;
	char a[32], b[32], c[32];

	heap_totals(s->heap, &t);
	ids = report_rank(s->heap, HEAP_RANK_LIVE, &n);
	shown = n < s->top ? n : s->top;
	text_header(f, s);
	text_totals(f, s, &t);
	text_invalid_frees(f, s, &t);
	if (n == 0)
		fprintf(f, "no stack holds live blocks\n\n");
	else
		fprintf(f, "top %u of %s %s by live bytes:\n\n", shown, report_num(a, n),
			report_plural(n, "stack", "stacks"));
	for (i = 0; i < shown; i++)
		text_stack(f, s->sym, heap_stack_get(s->heap, ids[i]), i + 1);
	free(ids);
	fprintf(f, "SUMMARY: %s bytes in %s %s still live from %s %s\n",
		report_num(a, t.live_bytes), report_num(b, t.live_blocks),
		report_plural(t.live_blocks, "block", "blocks"), report_num(c, n),
		report_plural(n, "stack", "stacks"));
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

