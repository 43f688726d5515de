/* report_json.c - the heap report for tools: one JSON file that stays valid after every snapshot. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "sym.h"
#include "util.h"

/* The closing text of a JSON report; report_json_add writes over it. */
#define JSON_TAIL "\n]}\n"

struct jt_json_out {
	FILE *f;
	unsigned nsnapshots;	/* written so far: decides whether a comma is due */
};

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

	ids = report_rank(s->heap, HEAP_RANK_INVALID, &n);
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
	ids = report_rank(s->heap, HEAP_RANK_LIVE, &n);
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
