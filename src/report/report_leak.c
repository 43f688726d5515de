/* report_leak.c - the leak verdict in the reports: suppressions applied to the loss records, per-stack lost figures, the text LEAK CHECK section, the JSON "leak_check". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "leak.h"
#include "report.h"
#include "report_common.h"
#include "report_jsonval.h"
#include "report_leak.h"
#include "supp.h"
#include "util.h"

void
report_leak_init(struct report_leak *rl, const struct jt_snapshot *s)
{
	const struct leak_result *r = s->leak_check ? s->leak : NULL;
	size_t i;

	memset(rl, 0, sizeof(*rl));
	rl->r = r;
	if (!r)
		return;
	memcpy(rl->bytes, r->bytes, sizeof(rl->bytes));
	memcpy(rl->blocks, r->blocks, sizeof(rl->blocks));
	rl->nstacks = heap_stack_count(s->heap);
	rl->supp = xcalloc(r->nrecords + 1, 1);
	rl->lost_bytes = xcalloc(rl->nstacks + 1, sizeof(*rl->lost_bytes));
	rl->lost_blocks = xcalloc(rl->nstacks + 1, sizeof(*rl->lost_blocks));
	for (i = 0; i < r->nrecords; i++) {
		const struct leak_record *rec = &r->records[i];
		const struct jt_stack *st = rec->stack_id < rl->nstacks ? heap_stack_get(s->heap, rec->stack_id) : NULL;

		/* As memcheck: a suppressed record leaves its kind's line for "suppressed:". */
		if (st && report_supp(s, st)) {
			rl->supp[i] = 1;
			rl->bytes[rec->kind] -= rec->bytes;
			rl->blocks[rec->kind] -= rec->blocks;
			rl->supp_bytes += rec->bytes;
			rl->supp_blocks += rec->blocks;
			continue;
		}
		if (st && rec->kind == LEAK_DEFINITE) {
			rl->lost_bytes[rec->stack_id] += rec->bytes + rec->ind_bytes;
			rl->lost_blocks[rec->stack_id] += rec->blocks + rec->ind_blocks;
		}
	}
}

void
report_leak_free(struct report_leak *rl)
{
	free(rl->supp);
	free(rl->lost_bytes);
	free(rl->lost_blocks);
	memset(rl, 0, sizeof(*rl));
}

uint64_t
report_leak_cost(const struct report_leak *rl, const struct jt_stack *st, int c)
{
	if (c != COST_DEFINITELY_LOST)
		return report_cost_of(st, (enum report_cost)c);
	if (!rl || !rl->lost_bytes || st->id >= rl->nstacks)
		return 0;
	return rl->lost_bytes[st->id];
}

/* An amount of memory for people: "512 bytes", "40.0 KB", "2.1 MB", "1.0 GB" (powers of 1024). */
static const char *
leak_size(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KB", "MB", "GB", "TB" };
	double v = (double)bytes;
	unsigned u = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " %s", bytes, bytes == 1 ? "byte" : "bytes");
		return buf;
	}
	for (v /= 1024; v >= 1024 && u + 1 < ARRAY_SIZE(units); u++)
		v /= 1024;
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

/* A duration for people: "850 us", "1.8 ms", "2.30 s". */
static const char *
leak_duration(char *buf, size_t len, uint64_t us)
{
	if (us < 1000)
		snprintf(buf, len, "%" PRIu64 " us", us);
	else if (us < 1000000)
		snprintf(buf, len, "%.1f ms", (double)us / 1000);
	else
		snprintf(buf, len, "%.2f s", (double)us / 1000000);
	return buf;
}

/* The section's first line: when, how long the process was held, how much was scanned. */
static void
leak_text_title(FILE *f, const struct jt_snapshot *s, const struct leak_result *r)
{
	char pause[32], roots[32], blocks[32];

	fprintf(f, "LEAK CHECK (at %s: %u %s stopped %s; %s of roots and %s of blocks scanned)\n",
		s->reason ? s->reason : "the snapshot", r->nthreads, r->nthreads == 1 ? "thread" : "threads",
		leak_duration(pause, sizeof(pause), r->pause_us),
		leak_size(roots, sizeof(roots), r->stats.root_bytes),
		leak_size(blocks, sizeof(blocks), r->stats.block_bytes));
	if (r->attached)
		fprintf(f, "note: jmptrace attached to a running process, so blocks allocated before\n"
			"      the attach are unknown: heap memory that is no known block was taken as\n"
			"      a root, and the verdicts err towards reachable.\n");
	fputc('\n', f);
}

/*
 * One loss record, as memcheck words it:
 *   48 bytes in 3 blocks are definitely lost in loss record 3 of 7
 *   96 (48 direct, 48 indirect) bytes in 3 blocks are definitely lost in loss record 3 of 7
 */
static void
leak_text_record(FILE *f, const struct jt_snapshot *s, const struct leak_record *rec, size_t total)
{
	char bb[96], a[32], b[32], c[32];

	if (rec->ind_bytes || rec->ind_blocks)
		fprintf(f, "%s (%s direct, %s indirect) bytes in %s %s", util_num(a, rec->bytes + rec->ind_bytes),
			util_num(b, rec->bytes), util_num(c, rec->ind_bytes), util_num(bb, rec->blocks),
			rec->blocks == 1 ? "block" : "blocks");
	else
		fputs(report_bytes_blocks(bb, sizeof(bb), rec->bytes, rec->blocks), f);
	/* "are": the bytes are lost, as memcheck says it for one block too. */
	fprintf(f, " are %s in loss record %s of %s\n", leak_kind_label(rec->kind),
		util_num(a, rec->number), util_num(b, (uint64_t)total));
	report_text_frames(f, s->sym, heap_stack_get(s->heap, rec->stack_id));
}

/* memcheck's LEAK SUMMARY, with the heuristics that made blocks reachable. */
static void
leak_text_summary(FILE *f, const struct report_leak *rl)
{
	static const struct {
		enum leak_kind kind;
		const char *label;
	} lines[] = {
		{ LEAK_DEFINITE, "   definitely lost" }, { LEAK_INDIRECT, "   indirectly lost" },
		{ LEAK_POSSIBLE, "     possibly lost" }, { LEAK_REACHABLE, "   still reachable" },
	};
	const struct leak_result *r = rl->r;
	char bb[96];
	unsigned i, any = 0;

	fprintf(f, "LEAK SUMMARY:\n");
	for (i = 0; i < ARRAY_SIZE(lines); i++)
		fprintf(f, "%s: %s\n", lines[i].label,
			report_bytes_blocks(bb, sizeof(bb), rl->bytes[lines[i].kind], rl->blocks[lines[i].kind]));
	for (i = 0; i < LEAK_NHEUR; i++)
		any |= r->heur_blocks[i] != 0;
	if (any)
		fprintf(f, "                      of which reachable via heuristic:\n");
	for (i = 0; i < LEAK_NHEUR; i++)
		if (r->heur_blocks[i])
			fprintf(f, "                        %-19s: %s\n", leak_heur_name(i),
				report_bytes_blocks(bb, sizeof(bb), r->heur_bytes[i], r->heur_blocks[i]));
	fprintf(f, "        suppressed: %s\n", report_bytes_blocks(bb, sizeof(bb), rl->supp_bytes, rl->supp_blocks));
}

void
report_leak_text(FILE *f, const struct jt_snapshot *s)
{
	struct report_leak rl;
	size_t i;

	if (!s->leak_check)
		return;
	if (!s->leak && s->reason && strcmp(s->reason, "exec") == 0) {
		/* The exec event comes once the old memory is gone: nothing of it is left to scan. */
		fprintf(f, "LEAK CHECK: no check could run (an exec replaced the image, and its memory\n"
			"with it, before it could be stopped)\n\n");
		return;
	}
	if (!s->leak) {
		fprintf(f, "LEAK CHECK: no check could run (the process was gone before it could be\n"
			"stopped with its memory intact: killed by a signal before _exit?)\n\n");
		return;
	}
	report_leak_init(&rl, s);
	leak_text_title(f, s, s->leak);
	for (i = 0; i < s->leak->nrecords; i++) {
		const struct leak_record *rec = &s->leak->records[i];

		if (!rl.supp[i] && (s->show_leak_kinds & (1u << rec->kind)))
			leak_text_record(f, s, rec, s->leak->nrecords);
	}
	leak_text_summary(f, &rl);
	fputc('\n', f);
	report_leak_free(&rl);
}

/* {"bytes": N, "blocks": M} */
static void
leak_json_bb(FILE *f, uint64_t bytes, uint64_t blocks)
{
	fprintf(f, "{\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 "}", bytes, blocks);
}

/* "summary": memcheck's LEAK SUMMARY, suppressed records left out of their kind and counted apart. */
static void
leak_json_summary(FILE *f, const struct report_leak *rl)
{
	static const enum leak_kind order[] = { LEAK_DEFINITE, LEAK_INDIRECT, LEAK_POSSIBLE, LEAK_REACHABLE };
	const char *sep = "";
	unsigned i;

	fputs(",\n  \"summary\": {", f);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		fprintf(f, "\"%s\": ", leak_kind_key(order[i]));
		leak_json_bb(f, rl->bytes[order[i]], rl->blocks[order[i]]);
		fputs(", ", f);
	}
	fputs("\"reachable_via_heuristic\": {", f);
	for (i = 0; i < LEAK_NHEUR; i++) {
		if (!rl->r->heur_blocks[i])
			continue;
		fprintf(f, "%s\"%s\": ", sep, leak_heur_name(i));
		leak_json_bb(f, rl->r->heur_bytes[i], rl->r->heur_blocks[i]);
		sep = ", ";
	}
	fputs("}, \"suppressed\": ", f);
	leak_json_bb(f, rl->supp_bytes, rl->supp_blocks);
	fputc('}', f);
}

/* One loss record; "stack" is the index of its entry in "stacks" (null for none). */
static void
leak_json_record(FILE *f, const struct jt_snapshot *s, const long *pos, uint32_t npos,
		 const struct leak_record *rec, int suppressed)
{
	long idx = rec->stack_id < npos ? pos[rec->stack_id] : -1;

	fprintf(f, "   {\"record\": %" PRIu32 ", \"leak_kind\": \"%s\", \"stack\": ", rec->number,
		leak_kind_key(rec->kind));
	if (idx >= 0)
		fprintf(f, "%ld", idx);
	else
		fputs("null", f);
	fprintf(f, ", \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"indirect_bytes\": %" PRIu64
		", \"indirect_blocks\": %" PRIu64 ", \"suppressed\": %s,\n    ", rec->bytes, rec->blocks,
		rec->ind_bytes, rec->ind_blocks, suppressed ? "true" : "false");
	jsonval_frames(f, s, heap_stack_get(s->heap, rec->stack_id));
	fputc('}', f);
}

void
report_leak_json(FILE *f, const struct jt_snapshot *s, const uint32_t *ids, uint32_t n)
{
	const struct leak_result *r = s->leak;
	uint32_t npos = heap_stack_count(s->heap);
	struct report_leak rl;
	const char *sep = "";
	long *pos;
	size_t i;

	if (!s->leak_check)
		return;
	if (!r) {
		fputs(",\n \"leak_check\": null", f);
		return;
	}
	report_leak_init(&rl, s);
	/* Where each stack is in "stacks", so that a record names its entry. */
	pos = xmalloc((npos + 1) * sizeof(*pos));
	for (i = 0; i < npos; i++)
		pos[i] = -1;
	for (i = 0; i < n; i++)
		pos[ids[i]] = (long)i;
	fprintf(f, ",\n \"leak_check\": {\"pause_us\": %" PRIu64 ", \"scan_us\": %" PRIu64
		", \"threads\": %u, \"root_bytes\": %" PRIu64 ", \"block_bytes\": %" PRIu64
		", \"attached\": %s, \"heuristics\": [", r->pause_us, r->scan_us, r->nthreads,
		r->stats.root_bytes, r->stats.block_bytes, r->attached ? "true" : "false");
	for (i = 0; i < LEAK_NHEUR; i++)
		if (r->heuristics & (1u << i)) {
			fprintf(f, "%s\"%s\"", sep, leak_heur_name((unsigned)i));
			sep = ", ";
		}
	fputc(']', f);
	leak_json_summary(f, &rl);
	fputs(",\n  \"records\": [", f);
	for (i = 0; i < r->nrecords; i++) {
		fputs(i ? ",\n" : "\n", f);
		leak_json_record(f, s, pos, npos, &r->records[i], rl.supp[i]);
	}
	fputs(r->nrecords ? "\n  ]}" : "]}", f);
	free(pos);
	report_leak_free(&rl);
}
