/* report.c - what the text and JSON reports share: allocation-call totals, signal names, symbolized frames, ranked stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "supp.h"
#include "sym.h"
#include "unwind.h"
#include "util.h"
#include "wrap.h"

uint64_t
report_alloc_calls(const struct jt_snapshot *s)
{
	uint64_t sum = 0;
	unsigned i;

	for (i = 0; i < s->ncalls; i++)
		if (!alloc_fn_is_free(s->call_fns[i]))
			sum += s->calls[i];
	return sum;
}

const char *
report_signame(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

int
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
		fr[0].name = REPORT_SIGNAL_FRAME;
		fr[0].file = NULL;
		fr[0].line = 0;
		fr[0].inlined = 0;
		fr[0].signal_frame = 1;
		n = 1;
	}
	return n;
}

const char *
report_supp(const struct jt_snapshot *s, const struct jt_stack *st)
{
	static const char none;	/* the word of a stack that no rule matches */
	uintptr_t *w;
	const char *match;

	if (!s->supp)
		return NULL;
	w = heap_memo(s->heap, s->supp, st->id);
	if (*w)
		return *w == (uintptr_t)&none ? NULL : (const char *)*w;
	match = supp_match(s->supp, s->sym, st);
	*w = match ? (uintptr_t)match : (uintptr_t)&none;
	return match;
}

int
report_site(struct jt_sym *sym, const struct jt_wrap *w, const struct jt_stack *st)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	int n, k, at = 0;

	for (uint32_t i = 0; i < st->depth; i++) {
		n = report_resolve(sym, st, i, fr);
		for (k = 0; k < n; k++, at++)
			if (!wrap_match(w, &fr[k]))
				return at;
	}
	return 0;
}

const char *
report_frame_place(const struct jt_frame *fr, char *buf, size_t len)
{
	const char *slash = fr->file ? strrchr(fr->file, '/') : NULL;

	if (fr->file)
		snprintf(buf, len, " (%s:%d)", slash ? slash + 1 : fr->file, fr->line);
	else if (fr->function && fr->module && !fr->signal_frame)
		snprintf(buf, len, " (in %s)", fr->module);
	else
		buf[0] = '\0';
	return buf;
}

/*
 * One frame, valgrind style: "at" for the innermost, "by" for the others,
 * the frame named by report_frame_label:
 *     at 0x401136: leak_here (leak.c:12)
 *     by 0x401150: helper (util.c:3) (inlined)
 *     by 0x7f12a0029d90: __libc_start_call_main (in libc.so.6)
 *     by 0x7f12a0029e40: libfoo.so+0x1e40
 *     by 0x10: 0x10
 */
static void
report_frame_line(FILE *f, const struct jt_frame *fr, int first)
{
	char label[REPORT_LABEL_MAX], place[REPORT_PLACE_MAX];

	fprintf(f, "    %s 0x%" PRIx64 ": %s%s", first ? "at" : "by", fr->address,
		report_frame_label(fr, label, sizeof(label)), report_frame_place(fr, place, sizeof(place)));
	if (fr->inlined)
		fputs(" (inlined)", f);
	fputc('\n', f);
}

void
report_text_frames(FILE *f, struct jt_sym *sym, const struct jt_stack *st)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	uint32_t i;
	int n, k, first = 1;

	if (st->depth == 0)
		fprintf(f, "    (no call stack was captured)\n");
	for (i = 0; i < st->depth; i++) {
		n = report_resolve(sym, st, i, fr);
		for (k = 0; k < n; k++, first = 0)
			report_frame_line(f, &fr[k], first);
	}
	if (st->truncated == HEAP_CUT_DEPTH)
		fprintf(f, "    ... (stack cut at --depth %u)\n", st->depth);
	else if (st->truncated)
		fprintf(f, "    ... (stack cut where the copied stack ended: raise --stack-copy)\n");
	fputc('\n', f);
}

const char *
report_bytes_blocks(char *buf, size_t len, uint64_t bytes, uint64_t blocks)
{
	char a[32], b[32];

	snprintf(buf, len, "%s bytes in %s %s", util_num(a, bytes), util_num(b, blocks),
		 blocks == 1 ? "block" : "blocks");
	return buf;
}

const char *
report_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

uint32_t *
report_rank(const struct jt_heap *h, enum heap_rank by, uint32_t *n)
{
	uint32_t count = heap_stack_count(h);
	uint32_t *ids = xmalloc((count ? count : 1) * sizeof(*ids));

	*n = heap_rank_stacks(h, by, ids, count);
	return ids;
}

static const char *const report_cost_names[] = {
	[COST_LIVE] = "live",
	[COST_PEAK] = "peak",
	[COST_CALLS] = "calls",
	[COST_BYTES] = "bytes",
	[COST_TEMPORARY] = "temporary",
	[COST_DEFINITELY_LOST] = "definitely-lost",
};

int
report_cost_parse(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(report_cost_names); i++)
		if (strcmp(name, report_cost_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
report_cost_name(enum report_cost c)
{
	return (unsigned)c < ARRAY_SIZE(report_cost_names) ? report_cost_names[c] : "live";
}

static const char *const report_section_names[SECTION_COUNT] = {
	[SECTION_LEAKS] = "leaks", [SECTION_GROWTH] = "growth", [SECTION_LIVE] = "live",
	[SECTION_PEAK] = "peak", [SECTION_CALLS] = "calls", [SECTION_BYTES] = "bytes",
	[SECTION_TEMPORARY] = "temporary", [SECTION_INVALID] = "invalid", [SECTION_TOTALS] = "totals",
	[SECTION_PAGES] = "pages",
};

/* The section named by list[0..len), or -1. */
static int
report_section_find(const char *name, size_t len)
{
	for (int i = 0; i < SECTION_COUNT; i++)
		if (strlen(report_section_names[i]) == len && strncmp(name, report_section_names[i], len) == 0)
			return i;
	return -1;
}

int
report_sections_parse(const char *list, unsigned *mask)
{
	const char *p = list, *comma;
	int sec;

	*mask = 0;
	for (;;) {
		comma = strchr(p, ',');
		sec = report_section_find(p, comma ? (size_t)(comma - p) : strlen(p));
		if (sec < 0)
			return -1;
		*mask |= 1u << sec;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int
report_wants(const struct jt_snapshot *s, enum report_section sec)
{
	return !s->sections || (s->sections & (1u << sec));
}

uint64_t
report_cost_of(const struct jt_stack *st, enum report_cost c)
{
	switch (c) {
	case COST_PEAK: return st->peak_bytes;
	case COST_CALLS: return st->alloc_calls;
	case COST_BYTES: return st->alloc_bytes;
	case COST_TEMPORARY: return st->temporary;
	/* It is the snapshot's leak verdict, not the stack's: report_leak_cost has it. */
	case COST_DEFINITELY_LOST: return 0;
	case COST_LIVE:
	default: return st->live_bytes;
	}
}

const char *
report_frame_label(const struct jt_frame *fr, char *buf, size_t len)
{
	if (fr->name)
		return fr->name;
	if (fr->function)
		return fr->function;
	if (fr->module)
		snprintf(buf, len, "%s+0x%" PRIx64, fr->module, fr->offset);
	else
		snprintf(buf, len, "0x%" PRIx64, fr->address);
	return buf;
}
