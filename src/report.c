/* report.c - writes heap snapshots: a text report for people and a JSON file for tools. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report.h"
#include "sym.h"
#include "unwind.h"
#include "util.h"

/* Source-level frames kept for one pc: the function and what was inlined into it. */
#define REPORT_MAX_FRAMES 32

/* What a signal frame is called, in gdb's words. */
#define REPORT_SIGNAL_FRAME "<signal handler called>"

/* The closing text of a JSON report; report_json_add writes over it. */
#define JSON_TAIL "\n]}\n"

struct jt_json_out {
	FILE *f;
	unsigned nsnapshots;	/* written so far: decides whether a comma is due */
};

static uint64_t
report_alloc_calls(const struct jt_snapshot *s)
{
	uint64_t sum = 0;
	unsigned i;

	for (i = 0; i < s->ncalls; i++)
		if (!alloc_fn_is_free(s->call_fns[i]))
			sum += s->calls[i];
	return sum;
}

/* Writes "SIGSEGV" (or "signal 99" for a number the C library cannot name) into buf. */
static const char *
report_signame(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

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

/*
 * Symbolizes frame i of st into fr[]; a bare frame when there is no
 * symbolizer. A return address is looked up in its call, but the pc above a
 * signal frame is where the signal interrupted, so it is looked up as it is.
 * The signal frame itself is one frame, named as gdb names it, in the
 * module of the trampoline.
 */
static int
report_resolve(struct jt_sym *sym, const struct jt_stack *st, uint32_t i, struct jt_frame *fr)
{
	uint64_t pc = unwind_pc_addr(st->pcs[i]);
	int sig = (st->pcs[i] & UNWIND_PC_SIGNAL) != 0, n = 1;
	int is_ret = !sig && (i == 0 || !(st->pcs[i - 1] & UNWIND_PC_SIGNAL));

	if (sym) {
		n = sym_resolve(sym, pc, is_ret, fr, REPORT_MAX_FRAMES);
	} else {
		memset(fr, 0, sizeof(*fr));
		fr->address = pc;
		fr->offset = pc;
	}
	if (sig) {
		fr[0] = fr[n - 1];
		fr[0].function = REPORT_SIGNAL_FRAME;
		fr[0].file = NULL;
		fr[0].line = 0;
		fr[0].inlined = 0;
		fr[0].signal_frame = 1;
		n = 1;
	}
	return n;
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

/* Returns the ids of the stacks that made invalid frees, most first; *n gets the count. */
static uint32_t *
report_invalid_stacks(const struct jt_heap *h, uint32_t *n)
{
	uint32_t count = heap_stack_count(h);
	uint32_t *ids = xmalloc((count ? count : 1) * sizeof(*ids));

	*n = heap_rank_stacks(h, HEAP_RANK_INVALID, ids, count);
	return ids;
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

	ids = report_invalid_stacks(s->heap, &n);
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

/* Returns the ids of every stack holding live blocks, biggest first; *n gets the count. */
static uint32_t *
report_live_stacks(const struct jt_heap *h, uint32_t *n)
{
	uint32_t count = heap_stack_count(h);
	uint32_t *ids = xmalloc((count ? count : 1) * sizeof(*ids));

	*n = heap_rank_stacks(h, HEAP_RANK_LIVE, ids, count);
	return ids;
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
	ids = report_live_stacks(s->heap, &n);
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

/* Length of the valid UTF-8 sequence at p, or 0 when the bytes there are not one. */
static int
json_utf8_len(const unsigned char *p)
{
	int len, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	for (i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong 3- and 4-byte forms, surrogates and code points past U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)
	    || (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return len;
}

/*
 * Writes str as a JSON string, or null. Paths and names are bytes, not
 * necessarily UTF-8; a byte that is not part of valid UTF-8 becomes U+FFFD
 * so that strict parsers still accept the file.
 */
static void
json_str(FILE *f, const char *str)
{
	const unsigned char *p = (const unsigned char *)str;
	int len;

	if (!str) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else if (*p < 0x80)
			fputc(*p, f);
		else if ((len = json_utf8_len(p)) > 0) {
			fwrite(p, 1, len, f);
			p += len - 1;
		} else
			fputs("\\ufffd", f);
	}
	fputc('"', f);
}

static void
json_frame(FILE *f, const struct jt_frame *fr)
{
	fprintf(f, "{\"address\": \"0x%" PRIx64 "\", \"module\": ", fr->address);
	json_str(f, fr->module);
	fputs(", \"function\": ", f);
	json_str(f, fr->function);
	fputs(", \"file\": ", f);
	json_str(f, fr->file);
	fprintf(f, ", \"line\": %d, \"inlined\": %s}", fr->file ? fr->line : 0,
		fr->inlined ? "true" : "false");
}

/* Writes "frames": [...] for st: every source-level frame of every pc. */
static void
json_frames(FILE *f, struct jt_sym *sym, const struct jt_stack *st)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	const char *sep = "\n    ";
	uint32_t i;
	int n, k;

	fputs("\"frames\": [", f);
	for (i = 0; i < st->depth; i++) {
		n = report_resolve(sym, st, i, fr);
		for (k = 0; k < n; k++, sep = ",\n    ") {
			fputs(sep, f);
			json_frame(f, &fr[k]);
		}
	}
	/* Only on a cut stack, so that every other stack reads as before. */
	fputs(st->truncated ? "], \"truncated\": true" : "]", f);
}

static void
json_stack(FILE *f, struct jt_sym *sym, const struct jt_stack *st)
{
	fprintf(f, "  {\"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
		", \"alloc_calls\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64 ",\n   ",
		st->live_bytes, st->live_blocks, st->alloc_calls, st->alloc_bytes);
	json_frames(f, sym, st);
	fputc('}', f);
}

/* "invalid_frees": [{"count": N, "frames": [...]}, ...], most first. */
static void
json_invalid_frees(FILE *f, const struct jt_snapshot *s)
{
	uint32_t *ids, n, i;

	ids = report_invalid_stacks(s->heap, &n);
	fputs(",\n \"invalid_frees\": [", f);
	for (i = 0; i < n; i++) {
		const struct jt_stack *st = heap_stack_get(s->heap, ids[i]);

		fprintf(f, "%s  {\"count\": %" PRIu64 ",\n   ", i ? ",\n" : "\n", st->invalid_frees);
		json_frames(f, s->sym, st);
		fputc('}', f);
	}
	free(ids);
	fputs(n ? "\n ]" : "]", f);
}

static void
json_totals(FILE *f, const struct jt_snapshot *s, const struct jt_heap_totals *t)
{
	unsigned i;

	fputs(" \"totals\": {\"calls\": {", f);
	for (i = 0; i < s->ncalls; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, alloc_fns[s->call_fns[i]].name);
		fprintf(f, ": %" PRIu64, s->calls[i]);
	}
	fprintf(f, "}, \"alloc_calls\": %" PRIu64 ", \"bytes_allocated\": %" PRIu64
		", \"frees\": %" PRIu64 ", \"unknown_frees\": %" PRIu64
		", \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64
		", \"peak_live_bytes\": %" PRIu64 "},\n",
		report_alloc_calls(s), t->bytes_allocated, t->frees, t->unknown_frees,
		t->live_bytes, t->live_blocks, t->peak_live_bytes);
}

static void
json_header(FILE *f, const struct jt_snapshot *s)
{
	char sig[32];

	fputs("{\"reason\": ", f);
	json_str(f, s->reason);
	fprintf(f, ", \"pid\": %d, \"command\": ", s->pid);
	json_str(f, s->command);
	fprintf(f, ", \"exited\": %s, \"exit_status\": ", s->exited ? "true" : "false");
	if (s->exited && !s->killed_by)
		fprintf(f, "%d", s->exit_status);
	else
		fputs("null", f);
	fputs(", \"killed_by\": ", f);
	json_str(f, s->killed_by ? report_signame(s->killed_by, sig, sizeof(sig)) : NULL);
	fprintf(f, ", \"attached\": %s,\n", s->attached ? "true" : "false");
}

static void
json_snapshot(FILE *f, const struct jt_snapshot *s)
{
	struct jt_heap_totals t;
	uint32_t *ids, n, i;

	heap_totals(s->heap, &t);
	json_header(f, s);
	json_totals(f, s, &t);
	fputs(" \"stacks\": [", f);
	ids = report_live_stacks(s->heap, &n);
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_stack(f, s->sym, heap_stack_get(s->heap, ids[i]));
	}
	free(ids);
	fputs(n ? "\n ]" : "]", f);
	json_invalid_frees(f, s);
	fputc('}', f);
}

struct jt_json_out *
report_json_open(const char *path)
{
	struct jt_json_out *j;
	FILE *f = fopen(path, "w");

	if (!f)
		return NULL;
	/* An empty but valid report, so a run that dies early still leaves JSON. */
	if (fputs("{\"snapshots\": [" JSON_TAIL, f) == EOF || fflush(f) != 0) {
		fclose(f);
		return NULL;
	}
	j = xcalloc(1, sizeof(*j));
	j->f = f;
	return j;
}

int
report_json_add(struct jt_json_out *j, const struct jt_snapshot *s)
{
	/* Step back over the closing tail and write the snapshot plus a new tail. */
	if (fseek(j->f, -(long)strlen(JSON_TAIL), SEEK_END) != 0)
		return -1;
	fputs(j->nsnapshots ? ",\n" : "\n", j->f);
	json_snapshot(j->f, s);
	fputs(JSON_TAIL, j->f);
	j->nsnapshots++;
	return fflush(j->f) == 0 && !ferror(j->f) ? 0 : -1;
}

int
report_json_close(struct jt_json_out *j)
{
	int r;

	if (!j)
		return 0;
	r = fclose(j->f);
	free(j);
	return r == 0 ? 0 : -1;
}
