/* report_csv.c - the --csv writer: one RFC 4180 row per stack with its counters, histogram and frames. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "sym.h"
#include "util.h"

/* RFC 4180 ends every record with CRLF; spreadsheets and csv parsers take it as it is. */
#define CSV_EOL "\r\n"

/* Writes one field, quoted (with its quotes doubled) when it holds a comma, a quote or a line break. */
static void
csv_field(FILE *f, const char *str)
{
	if (!strpbrk(str, ",\"\r\n")) {
		fputs(str, f);
		return;
	}
	fputc('"', f);
	for (; *str; str++) {
		if (*str == '"')
			fputc('"', f);
		fputc(*str, f);
	}
	fputc('"', f);
}

/* Appends text to the growing string *buf (of capacity *cap, length *len). */
static void
csv_append(char **buf, size_t *len, size_t *cap, const char *text)
{
	size_t n = strlen(text);

	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		*buf = xrealloc(*buf, *cap);
	}
	memcpy(*buf + *len, text, n + 1);
	*len += n;
}

/*
 * The frames of st as one field: every source-level frame, innermost first,
 * "func (file:line)" (or "func (in module)", or module+0xOFF / 0xADDR when
 * nothing better is known), joined by " <- ".
 */
static void
csv_frames(FILE *f, struct jt_sym *sym, const struct jt_stack *st)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	size_t len = 0, cap = 256;
	char *buf = xmalloc(cap), label[REPORT_LABEL_MAX], place[REPORT_PLACE_MAX];

	buf[0] = '\0';
	for (uint32_t i = 0; i < st->depth; i++) {
		int n = report_resolve(sym, st, i, fr);

		for (int k = 0; k < n; k++) {
			if (len)
				csv_append(&buf, &len, &cap, " <- ");
			csv_append(&buf, &len, &cap, report_frame_label(&fr[k], label, sizeof(label)));
			csv_append(&buf, &len, &cap, report_frame_place(&fr[k], place, sizeof(place)));
		}
	}
	if (st->truncated)
		csv_append(&buf, &len, &cap, " <- ...");
	csv_field(f, buf);
	free(buf);
}

/* Marks in used[] the histogram buckets that count an allocation of any listed stack. */
static void
csv_used_buckets(const struct jt_heap *h, const uint32_t *ids, uint32_t n, int used[HEAP_HIST_BUCKETS])
{
	memset(used, 0, HEAP_HIST_BUCKETS * sizeof(*used));
	for (uint32_t i = 0; i < n; i++) {
		const struct jt_stack *st = heap_stack_get(h, ids[i]);

		for (unsigned k = 0; st->hist && k < HEAP_HIST_BUCKETS; k++)
			if (st->hist[k])
				used[k] = 1;
	}
}

/* The header row: the counters, "le_N" for each bucket in use (sizes up to N bytes), "frames". */
static void
csv_header(FILE *f, const int used[HEAP_HIST_BUCKETS])
{
	fputs("stack_id,alloc_calls,alloc_bytes,frees,temporary,live_blocks,live_bytes,"
	      "peak_blocks,peak_bytes", f);
	for (unsigned k = 0; k < HEAP_HIST_BUCKETS; k++) {
		if (!used[k])
			continue;
		/* Bucket 64's bound, 2^64, does not fit in a uint64_t: spelled out. */
		if (k >= 64)
			fputs(",le_18446744073709551616", f);
		else
			fprintf(f, ",le_%" PRIu64, heap_hist_bound(k));
	}
	fputs(",frames" CSV_EOL, f);
}

static void
csv_row(FILE *f, struct jt_sym *sym, const struct jt_stack *st, const int used[HEAP_HIST_BUCKETS])
{
	fprintf(f, "%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",", st->id, st->alloc_calls, st->alloc_bytes, st->frees,
		st->temporary, st->live_blocks, st->live_bytes, st->peak_blocks, st->peak_bytes);
	for (unsigned k = 0; k < HEAP_HIST_BUCKETS; k++)
		if (used[k])
			fprintf(f, "%" PRIu64 ",", st->hist ? st->hist[k] : 0);
	csv_frames(f, sym, st);
	fputs(CSV_EOL, f);
}

/* qsort_r order of the rows: live bytes descending, then stack id. */
static int
csv_cmp(const void *a, const void *b, void *heap)
{
	const struct jt_stack *x = heap_stack_get(heap, *(const uint32_t *)a);
	const struct jt_stack *y = heap_stack_get(heap, *(const uint32_t *)b);

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The stacks that allocated, but the filtered one (a stack that only made
 * invalid frees has no row: every column is about allocations), by live
 * bytes descending, then id. Returns a malloc'ed array; *n gets the count.
 */
static uint32_t *
csv_stacks(const struct jt_heap *h, uint32_t *n)
{
	uint32_t count = heap_stack_count(h), *ids = xmalloc((count ? count : 1) * sizeof(*ids));

	*n = 0;
	for (uint32_t id = 0; id < count; id++) {
		const struct jt_stack *st = heap_stack_get(h, id);

		if (st->alloc_calls && !st->filtered)
			ids[(*n)++] = id;
	}
	qsort_r(ids, *n, sizeof(*ids), csv_cmp, (void *)h);
	return ids;
}

int
report_csv(FILE *f, const struct jt_snapshot *s)
{
	int used[HEAP_HIST_BUCKETS];
	uint32_t n, *ids;

	ids = csv_stacks(s->heap, &n);
	csv_used_buckets(s->heap, ids, n, used);
	csv_header(f, used);
	for (uint32_t i = 0; i < n; i++)
		csv_row(f, s->sym, heap_stack_get(s->heap, ids[i]), used);
	free(ids);
	return ferror(f) ? -1 : 0;
}
